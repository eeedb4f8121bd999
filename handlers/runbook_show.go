package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

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
	page := PageFor(c, rb.Title)
	page.Active = "/runbooks"
	return Render(c, http.StatusOK, page, views.RunbookShow(page, v))
}

// RunbookRunShow is the outcome of one run, linking to its audit event.
func (h *Console) RunbookRunShow(c echo.Context) error {
	rb, err := h.runbook(c.Param("id"))
	if err != nil {
		return err
	}
	run, err := runbooks.GetRun(c.Request().Context(), h.DB.Read(), c.Param("run"))
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
	page := PageFor(c, v.Label)
	page.Active = "/runbooks"
	return Render(c, http.StatusOK, page, views.RunbookResult(page, v))
}
