package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
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
	if a.Status != approvals.StatusExecuted || a.Reversibility != risk.Compensatable {
		return notReversible(a)
	}
	return renderReverseConfirm(c, http.StatusOK, views.ReverseConfirmView{
		Action: a, TenantSlug: v.TenantSlug, CompensatingTool: v.CompensatingTool, Reversal: v.Reversal,
	})
}

func renderReverseConfirm(c echo.Context, status int, v views.ReverseConfirmView) error {
	page := PageFor(c, "Reverse "+v.Action.Summary)
	page.Active = "/approvals"
	return Render(c, status, page, views.ReverseConfirm(page, v))
}

// ApprovalReverse requests the reversal, with the reason typed, and opens
// it. Asking again opens the same reversal: the runtime keys it on the
// original's idempotency key. Without a reason the confirmation comes back
// (422) with what was wrong, and nothing is requested.
func (h *Console) ApprovalReverse(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, _, err := actionInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(c.FormValue("reason"))
	r, err := h.Execution.Reverse(ctx, *user, a.ID, reason)
	switch p := problem.From(err); {
	case err == nil:
		return seeOther(c, "/approvals/"+r.ID+"?done=reversal_requested")
	case errors.Is(err, approvals.ErrNotReversible):
		return notReversible(a)
	case p.Kind == problem.KindUnprocessable:
		v, lerr := loadApproval(ctx, h.DB, user, a.ID)
		if lerr != nil {
			return lerr
		}
		return renderReverseConfirm(c, http.StatusUnprocessableEntity, views.ReverseConfirmView{
			Action: a, TenantSlug: v.TenantSlug, CompensatingTool: v.CompensatingTool, Reversal: v.Reversal,
			Reason: reason, Errors: views.FieldErrors{"reason": p.Message},
		})
	default:
		return err
	}
}

// notReversible is the 409 for an action that has nothing to reverse, or
// no compensating tool to do it.
func notReversible(a approvals.Action) error {
	msg := "Only an executed action can be reversed; this one is " + strings.ToLower(approvals.StatusWord(a.Status)) + "."
	switch {
	case a.Reversibility == risk.Irreversible:
		msg = a.Tool + " is irreversible: it cannot be undone."
	case a.Reversibility != risk.Compensatable:
		msg = a.Tool + " has no compensating tool; undo it by the tool's own means, if it has any."
	}
	return problem.Conflict("conflict", msg)
}
