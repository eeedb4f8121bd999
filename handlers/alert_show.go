package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/views"
)

var alertShowNotices = map[string]string{
	"acked":         "Acknowledged: others see that you are on it.",
	"already_acked": "Someone acknowledged it before you; nothing changed.",
}

// AlertShow is one alert: what fired, why (the failure codes of its
// journeys, whose doing they are, and a link to them), who owns it and
// who acknowledged it, and the runbook that fits what failed, with its
// buttons filled for this alert.
func (h *Console) AlertShow(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, err := h.alertFor(ctx, user, c.Param("id"))
	if err != nil {
		return err
	}
	d, err := h.describeAlert(ctx, user, a, time.Now())
	if err != nil {
		return err
	}
	v := views.AlertDetailView{AlertSummary: d, CanAck: user.HasAnyRole(alerts.AckRoles...), Notice: doneNotice(c, alertShowNotices), Now: time.Now()}
	if d.Runbook != nil {
		held, err := runbooks.Held(ctx, h.DB.Read(), *d.Runbook)
		if err != nil {
			return err
		}
		for _, act := range d.Runbook.Actions {
			filled, missing := act.Fill(d.Params)
			v.Proposed = append(v.Proposed, views.ProposedAction{Action: filled, Missing: missing, Held: held[act.ID]})
		}
	}
	page := PageFor(c, a.What())
	page.Active = "/alerts"
	return Render(c, http.StatusOK, page, views.AlertShow(page, v))
}

// alertFor loads an alert the user may see: a budget alert only within
// their tenant scope (a skill's alert concerns every tenant). One they
// may not see is as missing as one that is not there.
func (h *Console) alertFor(ctx context.Context, user *identity.Principal, id string) (alerts.Alert, error) {
	a, err := alerts.Get(ctx, h.DB.Read(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(inScope([]alerts.Alert{a}, user)) == 0) {
		return alerts.Alert{}, alerts.ErrNoSuchAlert
	}
	return a, err
}

// describeAlert works out an alert's cause within the user's tenants, the
// runbook that fits it (by kind, subject and whose doing the failures
// are), the parameters its buttons are filled with, and its owner: the
// runbook's owner, or on-call when no runbook handles it.
func (h *Console) describeAlert(ctx context.Context, user *identity.Principal, a alerts.Alert, now time.Time) (views.AlertSummary, error) {
	d := views.AlertSummary{Alert: a, Owner: "on-call (no runbook handles this alert)"}
	var err error
	if d.Cause, err = alerts.CauseOf(ctx, h.DB.Read(), a, tenantFilterIDs(ctx, h, user), now); err != nil {
		return d, err
	}
	d.Params = d.Cause.Params(a)
	var creators []string
	for _, k := range d.Cause.Keys {
		creators = append(creators, k.CreatedBy)
	}
	if d.KeyOwners, err = principals.NamesOf(ctx, h.DB, creators); err != nil {
		return d, err
	}
	if rb, ok := h.Runbooks.For(a.Kind, a.Subject, d.Cause.Fault); ok {
		d.Runbook, d.Owner = &rb, rb.Owner
	}
	if !d.Cause.Since.IsZero() {
		d.JourneysURL = failingJourneysURL(d.Cause, "")
		for _, cc := range d.Cause.Codes {
			d.CodeURLs = append(d.CodeURLs, failingJourneysURL(d.Cause, cc.Code))
		}
	}
	return d, nil
}

// tenantFilterIDs are the ids of the user's tenants, nil for all.
func tenantFilterIDs(ctx context.Context, h *Console, user *identity.Principal) []string {
	if user.AllTenantScope() {
		return nil
	}
	_, ids, err := tenantScope(ctx, h.DB, user, "")
	if err != nil || ids == nil {
		return []string{}
	}
	return ids
}

// failingJourneysURL is the Traces list of the alert's failed journeys in
// its window, of one failure code when code is given.
func failingJourneysURL(c alerts.Cause, code string) string {
	q := url.Values{"skill": {c.Skill}, "since": {c.Since.UTC().Format(time.RFC3339)}}
	if c.Failures > 0 {
		q.Set("status", "failed")
	}
	if code != "" {
		q.Set("code", code)
	}
	return "/traces?" + q.Encode()
}

// AlertAck acknowledges an alert (on-call and admins): who, when and an
// optional note, once. The note is redacted before it is kept.
func (h *Console) AlertAck(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, err := h.alertFor(ctx, user, c.Param("id"))
	if err != nil {
		return err
	}
	changed, err := alerts.Acknowledge(ctx, h.DB, user, a.ID, h.redact(c.FormValue("note")), time.Now())
	if err != nil {
		return err
	}
	done := "acked"
	if !changed {
		done = "already_acked"
	}
	return seeOther(c, "/alerts/"+url.PathEscape(a.ID)+"?done="+done)
}
