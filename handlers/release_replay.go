package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// ReleaseReplay dry-runs a candidate release over the last n ended
// journeys of a skill (runtime.Replay) and shows, per journey, the
// recorded and the candidate route and outcome, and the route agreement
// rate. It reads only: the parameters are the query string.
func (h *Console) ReleaseReplay(c echo.Context) error {
	n, err := strconv.Atoi(c.QueryParam("n"))
	if err != nil {
		return &store.ValidationError{Fields: map[string]string{"n": "Say how many journeys to replay, 1 to " + strconv.Itoa(runtime.MaxReplay) + "."}}
	}
	rep, err := h.Runtime.Replay(c.Request().Context(), c.QueryParam("candidate"), c.QueryParam("skill"), n)
	if err != nil {
		return err
	}
	pg := PageFor(c, "Replay")
	pg.Active = "/releases"
	return Render(c, http.StatusOK, pg, views.ReleaseReplay(pg, rep))
}
