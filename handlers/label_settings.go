package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/app"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/views"
)

// LabelSettingsSet saves the labelling settings (the daily sample, the
// route accuracy alert's threshold and window). A bad value comes back on
// the Labelling page with a 422 and what was typed.
func (h *Console) LabelSettingsSet(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), "Changing the labelling settings and the route accuracy alert"); err != nil {
		return err
	}
	form := views.LabelSettingsForm{SamplePercent: strings.TrimSpace(c.FormValue("sample_percent")),
		AlertPercent: strings.TrimSpace(c.FormValue("alert_percent")), AlertLastN: strings.TrimSpace(c.FormValue("alert_last_n"))}
	num := func(s string) int {
		n, msg := formInt(s, "bad")
		if msg != "" {
			return -1 // refused by Validate with the field's message
		}
		return n
	}
	s := routelabels.Settings{SamplePercent: num(form.SamplePercent), AlertPercent: num(form.AlertPercent), AlertLastN: num(form.AlertLastN)}
	user := CurrentPrincipal(c)
	// Lowering the accuracy the alert fires below, or counting more
	// labels, quietens it: a second admin approves (changes.RouteAccuracy),
	// the whole save with it. Validate first: a bad value is the form's
	// 422, never a pending change.
	if len(s.Validate()) == 0 {
		prev, err := routelabels.GetSettings(c.Request().Context(), h.DB.Read())
		if err != nil {
			return err
		}
		before, after := app.RouteAccuracyValue(prev), app.RouteAccuracyValue(s)
		ch, err := h.govern(c, user, changes.Proposal{Kind: changes.RouteAccuracy, Subject: "route_accuracy_alert",
			Summary: fmt.Sprintf("Change the route accuracy alert from below %d %% over the last %d labelled journeys to below %d %% over the last %d (sample %d %% → %d %%)",
				before.AlertPercent, before.AlertLastN, after.AlertPercent, after.AlertLastN, before.SamplePercent, after.SamplePercent),
			Before: before, After: after})
		if err != nil || ch != nil {
			return changeRedirect(c, ch, err)
		}
	}
	changed, err := routelabels.SetSettings(c.Request().Context(), h.DB, audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, s, time.Now())
	var inv *store.ValidationError
	switch {
	case errors.As(err, &inv):
		v, err := h.labelQueueView(c)
		if err != nil {
			return err
		}
		form.Errors = views.FieldErrors(inv.Fields)
		v.Form = form
		return h.renderLabelQueue(c, http.StatusUnprocessableEntity, v)
	case err != nil:
		return err
	}
	return seeOther(c, "/labels?done="+map[bool]string{true: "settings_saved", false: "settings_unchanged"}[changed])
}
