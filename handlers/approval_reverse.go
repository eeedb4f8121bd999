package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/problem"
	"github.com/wardenhq/warden/views"
)

// ApprovalReverseConfirm explains a business rollback before it is asked
// for: reversing an executed, compensatable action creates a new
// high-impact action for its compensating tool, which needs approval.
func (h *Console) ApprovalReverseConfirm(c echo.Context) error {
	v, err := loadApproval(c.Request().Context(), h.DB, CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	a := v.Action
	if a.Status != approvals.StatusExecuted || a.Reversibility != tools.Compensatable {
		return notReversible(a)
	}
	page := PageFor(c, "Reverse "+a.Summary)
	page.Active = "/approvals"
	return Render(c, http.StatusOK, page, views.ReverseConfirm(page, views.ReverseConfirmView{
		Action: a, TenantSlug: v.TenantSlug, CompensatingTool: v.CompensatingTool, Reversal: v.Reversal,
	}))
}

// ApprovalReverse requests the reversal and opens it. Asking again opens
// the same reversal: the runtime keys it on the original's idempotency key.
func (h *Console) ApprovalReverse(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, _, err := actionInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	r, err := h.Runtime.Reverse(ctx, *user, a.ID)
	switch {
	case err == nil:
		return seeOther(c, "/approvals/"+r.ID+"?done=reversal_requested")
	case errors.Is(err, approvals.ErrNotReversible):
		return notReversible(a)
	default:
		return err
	}
}

// notReversible is the 409 for an action that has nothing to reverse, or
// no compensating tool to do it.
func notReversible(a approvals.Action) error {
	msg := "Only an executed action can be reversed; this one is " + a.Status + "."
	switch {
	case a.Reversibility == tools.Irreversible:
		msg = a.Tool + " is irreversible: it cannot be undone."
	case a.Reversibility != tools.Compensatable:
		msg = a.Tool + " has no compensating tool; undo it by the tool's own means, if it has any."
	}
	return problem.Conflict("conflict", msg)
}
