package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
)

// TestOwnerChangeNeedsTheObjectsScope: an admin of acme alone may ask for
// a new owner of acme, but not of a tool or a model deployment (they serve
// every tenant, and their own forms need an admin of all tenants), nor of
// another tenant — known or not, the same 403. Refused, nothing is
// recorded: no pending change, no audit event, the owner unchanged.
func TestOwnerChangeNeedsTheObjectsScope(t *testing.T) {
	in, _ := adminSession(t, "erin")
	ctx := context.Background()
	adminTenant(t, in.DB, "globex", "Globex")
	scoped := &identity.Principal{ID: "p-acme-admin", Name: "Acme Admin", Email: "acme-admin@test.invalid",
		Roles: []string{identity.RoleAdmin}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB, Runtime: in.Agent.Journeys, Sealer: in.Agent.Journeys.Sealer()}
	form := url.Values{"owner": {"group:mallory"}, "change_reason": {"mine now"}}

	for _, tt := range []struct{ object, key string }{
		{owners.Tool, "issue_refund"},
		{owners.Model, "any-deployment"},
		{owners.Tenant, "globex"},
		{owners.Tenant, "no-such-tenant"},
	} {
		audits, pending := auditCount(t, in.DB), changeCount(t, in.DB)
		_, err := callAs(t, h.OwnerSet, scoped, http.MethodPost, "/", form, "object", tt.object, "key", tt.key)
		if got := httpStatus(err); got != http.StatusForbidden {
			t.Errorf("an acme admin asking for a new owner of %s %s: status %d, want 403", tt.object, tt.key, got)
		}
		if a, c := auditCount(t, in.DB)-audits, changeCount(t, in.DB)-pending; a != 0 || c != 0 {
			t.Errorf("refused owner change of %s %s recorded %d audit events and %d changes, want none", tt.object, tt.key, a, c)
		}
	}
	if o, _ := owners.Get(ctx, in.DB.Read(), owners.Tool, "issue_refund"); o != "" {
		t.Errorf("issue_refund's owner = %q, want still nobody", o)
	}

	// Their own tenant: asked for, pending for a second admin.
	rec, err := callAs(t, h.OwnerSet, scoped, http.MethodPost, "/", form, "object", owners.Tenant, "key", "acme")
	if err != nil || rec.Code != http.StatusSeeOther {
		t.Fatalf("an acme admin asking for a new owner of acme: %d, %v; want 303 to the pending change", rec.Code, err)
	}
}

// changeCount is how many governed changes were recorded, in any status.
func changeCount(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(`SELECT COUNT(*) FROM changes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInstallationSettingsNeedAnAdminOfAllTenants: the labelling settings
// (with the route accuracy alert's threshold) and a skill's alert
// thresholds apply to every tenant's journeys, so an admin of acme alone
// is refused (403) and nothing changes; their pages offer them no form.
func TestInstallationSettingsNeedAnAdminOfAllTenants(t *testing.T) {
	in, _ := adminSession(t, "erin")
	scoped := &identity.Principal{ID: "p-acme-admin", Name: "Acme Admin", Email: "acme-admin@test.invalid",
		Roles: []string{identity.RoleAdmin}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB, Runtime: in.Agent.Journeys, Sealer: in.Agent.Journeys.Sealer()}
	skill := in.Agent.Journeys.Skills()[0].Name
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"labelling settings", func() error {
			_, err := callAs(t, h.LabelSettingsSet, scoped, http.MethodPost, "/", url.Values{"sample_percent": {"1"}, "alert_percent": {"1"}, "alert_last_n": {"10000"}})
			return err
		}},
		{"a skill's alert thresholds", func() error {
			_, err := callAs(t, h.AlertRuleSet, scoped, http.MethodPost, "/", url.Values{"failure_percent": {"100"}, "p99_ms": {"600000"},
				"window_minutes": {"1440"}, "min_journeys": {"100000"}}, "skill", skill)
			return err
		}},
	} {
		audits := auditCount(t, in.DB)
		if got := httpStatus(tt.call()); got != http.StatusForbidden {
			t.Errorf("an acme admin changing %s: status %d, want 403", tt.name, got)
		}
		if n := auditCount(t, in.DB) - audits; n != 0 {
			t.Errorf("a refused change of %s wrote %d audit events", tt.name, n)
		}
	}
	for _, page := range []struct {
		call func() (*httptest.ResponseRecorder, error)
		form string
	}{
		{func() (*httptest.ResponseRecorder, error) {
			return callAs(t, h.LabelQueue, scoped, http.MethodGet, "/labels", nil)
		}, "label-settings-form"},
		{func() (*httptest.ResponseRecorder, error) {
			return callAs(t, h.AlertList, scoped, http.MethodGet, "/alerts", nil)
		}, "alert-rule-form"},
	} {
		rec, err := page.call()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rec.Body.String(), `data-testid="`+page.form) {
			t.Errorf("an acme admin is offered %s, which would refuse them", page.form)
		}
	}
}
