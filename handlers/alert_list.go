package handlers

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/views"
)

// recentlyResolved is how many resolved alerts the Alerts page lists.
const recentlyResolved = 20

var alertNotices = map[string]string{
	"saved":     "Thresholds saved; they apply from the next evaluation.",
	"unchanged": "Those are the thresholds in force; nothing changed.",
}

// AlertList shows the firing and recently resolved alerts, with their
// runbooks, and every skill's thresholds (a form per skill for admins).
func (h *Console) AlertList(c echo.Context) error {
	return h.renderAlerts(c, http.StatusOK, doneNotice(c, alertNotices), "", views.AlertRuleForm{}, nil)
}

// renderAlerts renders the page; the rule of skill, when given, shows
// form and errs instead of the stored values.
func (h *Console) renderAlerts(c echo.Context, status int, note, skill string, form views.AlertRuleForm, errs views.FieldErrors) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	firing, err := h.firingSummaries(ctx, user)
	if err != nil {
		return err
	}
	resolved, err := alerts.Resolved(ctx, h.DB.Read(), recentlyResolved)
	if err != nil {
		return err
	}
	rules, err := alerts.Rules(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	v := views.AlertsView{Firing: firing, Resolved: inScope(resolved, user), CanEdit: user.HasRole(identity.RoleAdmin) && user.AllTenantScope(), Notice: note}
	// On-call see a pending threshold change too (what is about to
	// change under the alerts they answer); only admins open it. The
	// thresholds are installation-wide and shown to everyone here, so
	// are the changes asked for them, whatever the reader's tenants.
	if v.Pending, err = changes.PendingToRead(ctx, h.DB.Read(), *user, time.Now(), changes.AlertRule); err != nil {
		return err
	}
	for _, s := range h.Runtime.Skills() {
		r := alerts.RuleFor(rules, s.Name)
		row := views.AlertRuleRow{Rule: r, Form: views.AlertRuleFormOf(r)}
		if s.Name == skill {
			row.Form, row.Errors = form, errs
		}
		v.Rules = append(v.Rules, row)
	}
	page := PageFor(c, "Alerts")
	return Render(c, status, page, views.Alerts(page, v))
}

// firingSummaries are the alerts firing now that the user may see, those
// nobody acknowledged first, each with its cause, runbook and owner.
func (h *Console) firingSummaries(ctx context.Context, user *identity.Principal) ([]views.AlertSummary, error) {
	as, err := alerts.FiringForPeople(ctx, h.DB.Read())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []views.AlertSummary
	for _, a := range inScope(as, user) {
		d, err := h.describeAlert(ctx, user, a, now)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// inScope drops the budget alerts of tenants outside the user's scope;
// a skill's alerts concern every tenant.
func inScope(as []alerts.Alert, user *identity.Principal) []alerts.Alert {
	return slices.DeleteFunc(as, func(a alerts.Alert) bool { return a.Tenant != "" && !user.InTenant(a.Tenant) })
}
