package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

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
		return problem.Invalid("bad_request", "Choose approve or reject.")
	}
	comment := strings.TrimSpace(c.FormValue("comment"))
	res, err := h.Execution.Decide(ctx, approvals.Request{
		Principal: *user, ActionID: a.ID, Decision: decision, Comment: comment, Digest: c.FormValue("digest"),
	})
	if err == nil {
		return seeOther(c, "/approvals/"+a.ID+"?done="+decidedNotice(res))
	}
	// The domain's refusal says what went wrong; its kind says what the
	// approver needs next.
	switch p := problem.From(err); p.Kind {
	case problem.KindUnprocessable:
		return decideInvalid(c, h.DB, user, a.ID, decision, comment, p.Message)
	case problem.KindConflict:
		title := p.Title
		if title == "" {
			title = "This action can no longer be decided"
		}
		return decideConflict(c, h.DB, a.ID, title, p.Message+" Your decision was not recorded.")
	}
	return err // 403, 404 and 500: the error page
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
