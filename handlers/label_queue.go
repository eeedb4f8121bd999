package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/views"
)

// labelPageSize is how many journeys a page of the labelling queue lists.
const labelPageSize = 25

// LabelQueue shows the day's sample of journeys (today unless ?day=)
// that nobody has labelled yet, in the user's tenants, a page at a time.
func (h *Console) LabelQueue(c echo.Context) error {
	v, err := h.labelQueueView(c)
	if err != nil {
		return err
	}
	v.Notice = doneNotice(c, map[string]string{"settings_saved": "Settings saved.", "settings_unchanged": "Those were already the settings; nothing changed."})
	return h.renderLabelQueue(c, http.StatusOK, v)
}

func (h *Console) labelQueueView(c echo.Context) (views.LabelQueueView, error) {
	ctx := c.Request().Context()
	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	day := today
	if s := c.QueryParam("day"); s != "" {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil || d.After(today) {
			return views.LabelQueueView{}, problem.Invalid("bad_day", "The day is a date such as 2026-03-05, today or earlier.")
		}
		day = d
	}
	pageNo := 1
	if s := c.QueryParam("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return views.LabelQueueView{}, problem.Invalid("bad_page", "The page is a whole number from 1.")
		}
		pageNo = n
	}
	set, err := routelabels.GetSettings(ctx, h.DB.Read())
	if err != nil {
		return views.LabelQueueView{}, err
	}
	user := CurrentPrincipal(c)
	q, err := journeys.LabelQueueOf(ctx, h.DB.Read(), day, set.SamplePercent, user.InTenant)
	if err != nil {
		return views.LabelQueueView{}, err
	}
	v := views.LabelQueueView{Queue: q, Day: day.Format(time.DateOnly), PrevDay: day.AddDate(0, 0, -1).Format(time.DateOnly),
		Settings: set, CanConfigure: user.HasRole(identity.RoleAdmin) && user.AllTenantScope(), Now: now,
		Form: views.LabelSettingsForm{SamplePercent: strconv.Itoa(set.SamplePercent), AlertPercent: strconv.Itoa(set.AlertPercent),
			AlertLastN: strconv.Itoa(set.AlertLastN)}}
	if v.CanConfigure {
		if v.Pending, err = h.pendingOfKinds(ctx, user, changes.RouteAccuracy); err != nil {
			return views.LabelQueueView{}, err
		}
	}
	if day.Before(today) {
		v.NextDay = day.AddDate(0, 0, 1).Format(time.DateOnly)
	}
	from := (pageNo - 1) * labelPageSize
	if from < len(q.Items) {
		v.Items = q.Items[from:min(from+labelPageSize, len(q.Items))]
	}
	link := func(n int) string {
		return "/labels?" + url.Values{"day": {v.Day}, "page": {strconv.Itoa(n)}}.Encode()
	}
	if pageNo > 1 {
		v.Pager.Prev = link(pageNo - 1)
	}
	if from+labelPageSize < len(q.Items) {
		v.Pager.Next = link(pageNo + 1)
	}
	v.Pager.PrevLabel, v.Pager.NextLabel = "Previous", "Next"
	return v, nil
}

func (h *Console) renderLabelQueue(c echo.Context, status int, v views.LabelQueueView) error {
	pg := PageFor(c, "Labelling")
	pg.Active = "/labels"
	return Render(c, status, pg, views.LabelQueue(pg, v))
}
