package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/views"
)

// RunbookShow shows a runbook: its document, its buttons and its runs,
// newest first.
func (h *Console) RunbookShow(c echo.Context) error {
	rb, err := h.runbook(c.Param("id"))
	if err != nil {
		return err
	}
	pg, err := listPage(c, runbookRunsPageSize)
	if err != nil {
		return err
	}
	runs, err := runbooks.Runs(c.Request().Context(), h.DB.Read(), rb.ID, pg)
	if err != nil {
		return err
	}
	next, prev := pageLinks("/runbooks/"+rb.ID, nil, runs)
	v := views.RunbookView{Runbook: rb, Runs: runs.Rows,
		Pager: views.PagerView{Next: next, Prev: prev, NextLabel: "Older", PrevLabel: "Newer"}}
	// Opened from an alert: the buttons are filled with what it names.
	params, from, err := h.alertParams(c)
	if err != nil {
		return err
	}
	v.From = from
	ctx := c.Request().Context()
	held, err := runbooks.Held(ctx, h.DB.Read(), rb)
	if err != nil {
		return err
	}
	for _, a := range rb.Actions {
		filled, missing := a.Fill(params)
		v.Buttons = append(v.Buttons, views.ProposedAction{Action: filled, Missing: missing, Held: held[a.ID]})
	}
	if len(held) > 0 {
		user := CurrentPrincipal(c)
		v.MayPublish = user.HasRole(identity.RoleAdmin) && user.AllTenantScope()
		if v.Pending, err = changes.PendingOn(ctx, h.DB.Read(), rb.ID, time.Now(), changes.RunbookPublish); err != nil {
			return err
		}
	}
	page := PageFor(c, rb.Title)
	page.Active = "/runbooks"
	return Render(c, http.StatusOK, page, views.RunbookShow(page, v))
}

// RunbookRunShow is the outcome of one run with its audit event, and a
// link to the audit trail for those who may open it.
func (h *Console) RunbookRunShow(c echo.Context) error {
	rb, err := h.runbook(c.Param("id"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := runbooks.GetRun(ctx, h.DB.Read(), c.Param("run"))
	if err != nil {
		return err
	}
	if run.Runbook != rb.ID {
		return runbooks.ErrNoSuchRun
	}
	v := views.RunbookResultView{Runbook: rb, Run: run, Label: run.Action}
	if a := rb.Action(run.Action); a != nil {
		v.Label = a.Label
	}
	if v.Event, v.Names, err = runEvent(ctx, h.DB, run); err != nil {
		return err
	}
	page := PageFor(c, v.Label)
	page.Active = "/runbooks"
	v.AuditLink = page.MayOpen(string(views.RunAuditURL(run.ID)))
	return Render(c, http.StatusOK, page, views.RunbookResult(page, v))
}

// runEvent is the audit event a run wrote, with the names its ids stand
// for; nil while the run has written none.
func runEvent(ctx context.Context, st *store.DB, run runbooks.RunRecord) (*audit.Event, views.EventNames, error) {
	if run.AuditSeq == 0 {
		return nil, views.EventNames{}, nil
	}
	events, err := audit.Trail(ctx, st.Read(), "runbook", run.ID)
	if err != nil {
		return nil, views.EventNames{}, err
	}
	for _, e := range events {
		if e.Seq == run.AuditSeq {
			names, err := eventNames(ctx, st, []audit.Event{e})
			return &e, names, err
		}
	}
	return nil, views.EventNames{}, nil
}

// alertParams are the parameters of the alert a runbook page was opened
// from (?alert= on the page, a hidden field on the confirmation's form),
// worked out again on the server from the alert within the user's
// tenants; nil and no alert when none is named.
func (h *Console) alertParams(c echo.Context) (map[string]string, *views.AlertSummary, error) {
	id := c.QueryParam("alert")
	if id == "" {
		id = c.FormValue("alert")
	}
	if id == "" {
		return nil, nil, nil
	}
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, err := h.alertFor(ctx, user, id)
	if err != nil {
		return nil, nil, err
	}
	d, err := h.describeAlert(ctx, user, a, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return d.Params, &d, nil
}
