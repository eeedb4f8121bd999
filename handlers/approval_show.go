package handlers

import (
	"context"
	"errors"
	"github.com/wardenhq/warden/owners"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

var approvalNotices = map[string]string{
	"approved":           "You gave the final approval. The action runs now, exactly once; this page shows its receipt when it is done.",
	"approval_recorded":  "Your approval is recorded. Another approver must approve it before it runs.",
	"rejected":           "You rejected the action. It will not run, and the agent's journey ends as rejected.",
	"reversal_requested": "Reversal requested. It runs only once someone other than you approves it.",
	"retried":            "Execution retried under the same idempotency key. This page shows the receipt when it is done.",
}

// ApprovalShow is one action's page: what will happen, to whom and why,
// who decided what, the journey that asked, and — for an approver who may
// decide it — the Approve and Reject forms. Auditors, on-call engineers
// and admins read it without the forms. 404 when unknown, 403 when its
// tenant is outside the user's scope.
func (h *Console) ApprovalShow(c echo.Context) error {
	v, err := loadApproval(c.Request().Context(), h.DB, CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	v.Notice = doneNotice(c, approvalNotices)
	if n := doneNotice(c, takeNotices); n != "" {
		v.Notice = n
	} else if c.QueryParam("done") == "taken_over" && v.Claim != nil {
		v.Notice = "You took the review over; the approver who held it still may decide it, as may you."
	}
	skill := ""
	if v.Journey != nil {
		skill = v.Journey.Skill
	}
	v.Owners = h.Runbooks.OwnersOf(v.Action.Tool, skill)
	if o, err := owners.Get(c.Request().Context(), h.DB.Read(), owners.Tool, v.Action.Tool); err == nil {
		v.ToolOwner = o
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if c.QueryParam("done") == "approval_recorded" {
		if n := views.ApprovalRecordedNotice(v.Action); n != "" {
			v.Notice = n
		}
	}
	return renderApproval(c, http.StatusOK, v)
}

func renderApproval(c echo.Context, status int, v views.ApprovalView) error {
	page := PageFor(c, v.Action.Summary)
	page.Active = "/approvals"
	v = v.Links(page)
	return Render(c, status, page, views.ApprovalShow(page, v))
}

// actionInScope loads an action and its tenant's slug: 404 when unknown,
// and the same 404 when its tenant is outside the principal's scope, so
// that the answer does not tell which ids exist in other tenants.
func actionInScope(ctx context.Context, q store.Querier, p *identity.Principal, id string) (approvals.Action, string, error) {
	a, err := approvals.Get(ctx, q, id)
	if err != nil {
		return approvals.Action{}, "", err
	}
	t, err := tenants.ByID(ctx, q, a.TenantID)
	if err != nil {
		return approvals.Action{}, "", err
	}
	if p == nil || !p.InTenant(t.Slug) {
		return approvals.Action{}, "", approvals.ErrNotFound
	}
	return a, t.Slug, nil
}

// loadApproval gathers everything the action page shows, and what the
// user may do there.
func loadApproval(ctx context.Context, st *store.DB, user *identity.Principal, id string) (views.ApprovalView, error) {
	q := st.Read()
	a, slug, err := actionInScope(ctx, q, user, id)
	if err != nil {
		return views.ApprovalView{}, err
	}
	now := time.Now().UTC()
	v := views.ApprovalView{Action: a, TenantSlug: slug, Now: now}
	if v.Decisions, err = approvals.Decisions(ctx, q, a.ID); err != nil {
		return views.ApprovalView{}, err
	}
	if v.Approvers, err = approvals.Approvers(ctx, q, a.ID); err != nil {
		return views.ApprovalView{}, err
	}
	if a.JourneyID != "" {
		j, err := journeys.GetJourney(ctx, q, a.JourneyID)
		switch {
		case err == nil:
			v.Journey = &j
		case !errors.Is(err, store.ErrNotFound): // retention may have removed it
			return views.ApprovalView{}, err
		}
	}
	if a.Compensates != "" {
		o, err := approvals.Get(ctx, q, a.Compensates)
		switch {
		case err == nil:
			v.Original = &o
		case !errors.Is(err, store.ErrNotFound):
			return views.ApprovalView{}, err
		}
	}
	if a.Status == approvals.StatusPending {
		if v.OnTarget, err = approvals.OthersOnTarget(ctx, q, a, 5); err != nil {
			return views.ApprovalView{}, err
		}
	}
	switch a.Status {
	case approvals.StatusPending, approvals.StatusApproved, approvals.StatusExecuting:
		r, ok, err := approvals.Refundable(ctx, q, a)
		if err != nil {
			return views.ApprovalView{}, err
		}
		if ok {
			v.Refunded = &r
		}
	}
	if a.KeyID != "" {
		switch k, err := keys.ByID(ctx, q, a.KeyID); {
		case err == nil:
			v.KeyName = k.Name
		case !errors.Is(err, store.ErrNotFound):
			return views.ApprovalView{}, err
		}
	}
	r, err := approvals.ReversalOf(ctx, q, a.ID)
	switch {
	case err == nil:
		v.Reversal = &r
	case !errors.Is(err, store.ErrNotFound):
		return views.ApprovalView{}, err
	}
	if a.Reversibility == risk.Compensatable {
		if t, err := catalog.Get(ctx, q, a.Tool); err == nil {
			v.CompensatingTool = t.CompensatingTool
			if comp, err := catalog.Get(ctx, q, t.CompensatingTool); err == nil {
				v.CompensationOff = !comp.Enabled
			}
		}
	}
	switch v.ToolSwitch, err = catalog.SwitchOf(ctx, q, a.Tool); {
	case errors.Is(err, store.ErrNotFound): // removed from the catalog: it cannot run
	case err != nil:
		return views.ApprovalView{}, err
	}
	if v.Freeze, err = tenants.FreezeOf(ctx, q, a.TenantID); err != nil {
		return views.ApprovalView{}, err
	}
	if v.RequestedBy, err = principals.NameOf(ctx, st, a.RequestedBy); err != nil {
		return views.ApprovalView{}, err
	}
	if v.KeyOwner, err = principals.NameOf(ctx, st, a.KeyOwner); err != nil {
		return views.ApprovalView{}, err
	}
	if a.Status == approvals.StatusPending {
		c, held, err := approvals.ClaimOf(ctx, q, a.ID, now)
		if err != nil {
			return views.ApprovalView{}, err
		}
		if held {
			v.Claim, v.ClaimMine = &c, c.PrincipalID == user.ID
		}
	}
	return v.For(*user), nil
}

// refusalSentence turns a domain refusal into a sentence for the page.
var refusalSentence = views.RefusalSentence
