package handlers

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
)

// Take notices on the action page.
var takeNotices = map[string]string{
	"taken":    "You are reviewing this action: other approvers see that you took it. It is released by itself when the claim time passes, or when you press Release.",
	"released": "You released the action: it no longer shows you as reviewing it.",
}

// ApprovalTake records that an approver who may decide the action is
// reviewing it (an advisory claim: it locks nothing). From the queue it
// returns to the queue; from the page, to the page, saying from whom the
// claim was taken over when someone else held it. 403 when the approver
// may not decide it, 409 when it is no longer pending.
func (h *Console) ApprovalTake(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, _, err := actionInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	res, err := approvals.Take(ctx, h.DB, *user, a.ID, time.Now().UTC())
	if err != nil {
		return err
	}
	if c.FormValue("from") == "queue" {
		return seeOther(c, "/approvals")
	}
	if res.Previous != nil {
		return seeOther(c, "/approvals/"+a.ID+"?done=taken_over")
	}
	return seeOther(c, "/approvals/"+a.ID+"?done=taken")
}

// ApprovalRelease gives up the approver's own claim on an action.
func (h *Console) ApprovalRelease(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, _, err := actionInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	if err := approvals.Release(ctx, h.DB, *user, a.ID, time.Now().UTC()); err != nil {
		return err
	}
	return seeOther(c, "/approvals/"+a.ID+"?done=released")
}
