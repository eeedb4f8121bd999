package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

const tracePageSize = 50

var journeyStatuses = []string{
	journeys.StatusRunning, journeys.StatusCompleted, journeys.StatusAwaitingApproval, journeys.StatusFailed,
	journeys.StatusRejected, journeys.StatusExpired, journeys.StatusCancelled,
}

// TraceList shows journeys of the tenants in scope, newest first, with
// filters, a page at a time ("Older" continues before the last id shown).
func (h *Console) TraceList(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	var err error
	ff := views.TraceFilter{
		Tenant: c.QueryParam("tenant"),
		Status: c.QueryParam("status"),
		Skill:  strings.TrimSpace(c.QueryParam("skill")),
		Code:   strings.TrimSpace(c.QueryParam("code")),
		Tool:   strings.TrimSpace(c.QueryParam("tool")),
		Since:  c.QueryParam("since"),
		From:   c.QueryParam("from"),
		To:     c.QueryParam("to"),
	}
	f := journeys.Filter{Status: ff.Status, Skill: ff.Skill, ErrorCode: ff.Code, Tool: ff.Tool}
	f.Page, err = listPage(c, tracePageSize)
	if err != nil {
		return err
	}
	scope, ids, err := tenantScope(ctx, h.DB, user, ff.Tenant)
	if err != nil {
		return err
	}
	f.TenantIDs = ids
	if f.Since, err = filterDay(ff.From, "from"); err != nil {
		return err
	}
	// since is a moment (an alert's window links here with it); it
	// narrows "from" when both are given.
	if ff.Since != "" {
		t, err := time.Parse(time.RFC3339, ff.Since)
		if err != nil {
			return problem.Invalid("bad_request", "The time \"since\" must look like 2026-01-31T12:00:00Z.")
		}
		if t.After(f.Since) {
			f.Since = t.UTC()
		}
	}
	if f.Until, err = filterDay(ff.To, "to"); err != nil {
		return err
	}
	if !f.Until.IsZero() {
		f.Until = f.Until.AddDate(0, 0, 1) // "to" is inclusive: up to the end of that day
	}
	js, err := journeys.ListJourneys(ctx, h.DB.Read(), f)
	if err != nil {
		return err
	}
	v := views.TracesView{
		Journeys: js.Rows, Tenants: scope, Filter: ff, Statuses: journeyStatuses,
		Filtered: ff != views.TraceFilter{} || !f.Page.First(), Now: time.Now(),
	}
	journeyIDs := make([]string, 0, len(js.Rows))
	for _, j := range js.Rows {
		journeyIDs = append(journeyIDs, j.ID)
	}
	if v.Actions, err = approvals.JourneyActions(ctx, h.DB.Read(), journeyIDs); err != nil {
		return err
	}
	v.NextPage, v.PrevPage = pageLinks("/traces", c.QueryParams(), js)
	page := PageFor(c, "Traces")
	return Render(c, http.StatusOK, page, views.TraceList(page, v))
}

// filterDay reads a date filter (YYYY-MM-DD, UTC); empty is no filter.
func filterDay(raw, name string) (time.Time, error) {
	if raw == "" {
		return time.Time{}, nil
	}
	d, err := time.ParseInLocation("2006-01-02", raw, time.UTC)
	if err != nil {
		return time.Time{}, problem.Invalid("bad_request", "The date \""+name+"\" must look like 2026-01-31.")
	}
	return d, nil
}
