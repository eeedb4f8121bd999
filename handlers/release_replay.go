package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/views"
)

// ReleaseReplayRun dry-runs a candidate release over the last n ended
// journeys of a skill and keeps the report (runtime.RecordReplay); it
// redirects to the kept replay.
func (h *Console) ReleaseReplayRun(c echo.Context) error {
	n, err := strconv.Atoi(c.FormValue("n"))
	if err != nil {
		return &store.ValidationError{Fields: map[string]string{"n": "Say how many journeys to replay, 1 to " + strconv.Itoa(journeys.MaxReplay) + "."}}
	}
	user := CurrentPrincipal(c)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, Name: user.DisplayName()}
	id, err := h.Runtime.RecordReplay(c.Request().Context(), by, c.FormValue("candidate"), c.FormValue("skill"), n)
	if err != nil {
		return err
	}
	return seeOther(c, "/releases/replays/"+id)
}

// ReleaseReplayShow shows a kept replay: per journey, the recorded and the
// candidate route and outcome, and the route agreement rate.
func (h *Console) ReleaseReplayShow(c echo.Context) error {
	kept, err := releases.GetReplay(c.Request().Context(), h.DB.Read(), c.Param("id"))
	if err != nil {
		return err
	}
	rep, err := journeys.ReplayReportOf(kept)
	if err != nil {
		return err
	}
	pg := PageFor(c, "Replay")
	pg.Active = "/releases"
	return Render(c, http.StatusOK, pg, views.ReleaseReplay(pg, kept, rep))
}
