package handlers

import (
	"net/http"

	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/views"
)

// runbookRunsPageSize is how many runs a runbook's page lists.
const runbookRunsPageSize = 20

// RunbookList lists the runbooks, most severe first.
func (h *Console) RunbookList(c echo.Context) error {
	held, err := runbooks.HeldCounts(c.Request().Context(), h.DB.Read(), h.Runbooks)
	if err != nil {
		return err
	}
	page := PageFor(c, "Runbooks")
	page.Active = "/runbooks"
	return Render(c, http.StatusOK, page, views.Runbooks(page, views.RunbooksView{Runbooks: h.Runbooks.All(), Held: held}))
}

// runbookDeps are what running a runbook action needs.
func (h *Console) runbookDeps() runbooks.Deps {
	d := runbooks.Deps{DB: h.DB, Runbooks: h.Runbooks}
	if h.Runtime != nil && h.Execution != nil {
		d.Runtime = runbooks.Services{Journeys: h.Runtime, Execution: h.Execution}
	}
	if h.Sealer != nil {
		d.Sealer = h.Sealer
	}
	return d
}

// runbook finds the runbook a URL names: 404 when there is none.
func (h *Console) runbook(id string) (runbooks.Runbook, error) {
	rb, ok := h.Runbooks.Get(id)
	if !ok {
		return rb, problem.NotFound("not_found", "There is no runbook "+strconv.Quote(id)+".")
	}
	return rb, nil
}
