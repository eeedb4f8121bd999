package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// maxCommentLen is the longest comment a decision keeps.
const maxCommentLen = 2000

// ApprovalDecide records an approver's decision on the payload they saw
// (the form's digest). The approval policy is the domain's; this handler
// maps its refusals to what the approver needs next: 403 when they may not
// decide it at all, 409 with the action's current state when it changed or
// was decided meanwhile, 422 with the field error when a rejection has no
// reason. Nothing is recorded on any refusal.
func (h *Console) ApprovalDecide(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, _, err := actionInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	decision := c.FormValue("decision")
	if decision != approvals.Approve && decision != approvals.Reject {
		return echo.NewHTTPError(http.StatusBadRequest, "Choose approve or reject.")
	}
	comment := strings.TrimSpace(c.FormValue("comment"))
	if len(comment) > maxCommentLen {
		return decideInvalid(c, h.DB, user, a.ID, decision, comment, "Keep the comment under 2000 characters.")
	}
	res, err := h.Runtime.Decide(ctx, approvals.Request{
		Principal: *user, ActionID: a.ID, Decision: decision, Comment: comment, Digest: c.FormValue("digest"),
	})
	switch {
	case err == nil:
		return seeOther(c, "/approvals/"+a.ID+"?done="+decidedNotice(res))
	case errors.Is(err, approvals.ErrReasonRequired):
		return decideInvalid(c, h.DB, user, a.ID, decision, comment, "A rejection needs a reason: say why, for the agent's owner and the audit trail.")
	case errors.Is(err, approvals.ErrStale):
		return decideConflict(c, h.DB, a.ID, "The action changed since you opened it",
			"Its payload is no longer the one you reviewed, so your decision was not recorded. Reload it and review it again.")
	case errors.Is(err, approvals.ErrAlreadyApproved):
		return decideConflict(c, h.DB, a.ID, "You have already approved this action", refusalSentence(err)+" Your second approval was not recorded.")
	case errors.Is(err, approvals.ErrAlreadyDecided), errors.Is(err, approvals.ErrExpired):
		return decideConflict(c, h.DB, a.ID, "This action can no longer be decided", refusalSentence(err)+" Your decision was not recorded.")
	case errors.Is(err, approvals.ErrOwnRequest), errors.Is(err, approvals.ErrOwnKey), errors.Is(err, approvals.ErrNotApprover), errors.Is(err, approvals.ErrOutOfScope):
		return Forbidden(refusalSentence(err))
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "There is no action with this id.")
	case errors.Is(err, runtime.ErrBudget):
		return decideConflict(c, h.DB, a.ID, "The tenant's budget cannot cover this action",
			"Its execution would overspend the budget, so your approval was not recorded. An admin can raise the budget; then approve again.")
	default:
		return err
	}
}

// decidedNotice names the notice the action page shows after a decision.
func decidedNotice(res approvals.Result) string {
	switch res.Action.Status {
	case approvals.StatusRejected:
		return "rejected"
	case approvals.StatusPending:
		return "approval_recorded"
	}
	return "approved"
}

// decideInvalid shows the action page again with the decision's field
// error and what the approver typed (422).
func decideInvalid(c echo.Context, st *store.DB, user *identity.Principal, id, decision, comment, msg string) error {
	v, err := loadApproval(c.Request().Context(), st, user, id)
	if err != nil {
		return err
	}
	field := "comment"
	if decision == approvals.Reject {
		field = "reason"
		v.Comment = comment
	}
	v.Errors = views.FieldErrors{field: msg}
	return renderApproval(c, http.StatusUnprocessableEntity, v)
}

// decideConflict answers 409 with the action as it is now.
func decideConflict(c echo.Context, st *store.DB, id, title, msg string) error {
	a, err := approvals.Get(c.Request().Context(), st.Read(), id)
	if err != nil {
		return err
	}
	page := PageFor(c, title)
	page.Active = "/approvals"
	return Render(c, http.StatusConflict, page, views.ApprovalConflict(page, views.ApprovalConflictView{Action: a, Title: title, Message: msg}))
}
