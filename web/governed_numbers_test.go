package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
)

// TestGovernedNumbersRefuseOddSpellings: the numbers of the forms that
// govern controls (dual-control threshold and window, budget, a key's
// model rate limits, the labelling settings) take digits only. Scientific
// notation, separators, a sign, full-width or Arabic-Indic digits and
// values past int64 come back as 422 on the form, and nothing is saved:
// no audit event, no pending change. "-0" is refused too — on a key's
// limits 0 means "no limit", so a stray minus must not remove one.
func TestGovernedNumbersRefuseOddSpellings(t *testing.T) {
	in, erin := adminSession(t, "erin")
	ctx := context.Background()
	acme := adminTenantBySlug(t, in.DB, "acme")
	var key keys.Key
	if err := in.DB.Transact(ctx, func(tx *store.Tx) (err error) {
		key, _, err = keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: acme.ID, Name: "acme-bot",
			Scopes: []string{"skill:refunds"}, RatePerMin: 1, Burst: 1, CreatedBy: "cli"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := models.SetKeyLimits(ctx, in.DB, testActor, key, models.KeyLimits{RPM: 60, TPM: 1000}); err != nil {
		t.Fatal(err)
	}
	forms := []struct {
		path  string
		base  url.Values
		field string
	}{
		{"/tenants/acme/dual-control", url.Values{"currency": {"USD"}}, "dual_control"},
		{"/tenants/acme/dual-control-window", url.Values{}, "window_hours"},
		{"/budgets/acme", url.Values{"period": {"day"}, "alert_percent": {"80"}}, "limit"},
		{"/budgets/acme", url.Values{"period": {"day"}, "limit": {"100"}}, "alert_percent"},
		{"/keys/" + key.ID + "/model-limits", url.Values{"model_tpm": {"1000"}}, "model_rpm"},
		{"/keys/" + key.ID + "/model-limits", url.Values{"model_rpm": {"60"}}, "model_tpm"},
		{"/labels/settings", url.Values{"alert_percent": {"80"}, "alert_last_n": {"50"}}, "sample_percent"},
		{"/labels/settings", url.Values{"sample_percent": {"10"}, "alert_last_n": {"50"}}, "alert_percent"},
		{"/labels/settings", url.Values{"sample_percent": {"10"}, "alert_percent": {"80"}}, "alert_last_n"},
	}
	odd := []string{"1e3", "1,000.00", "-0", "+12", "０１２", "١٢", "0x10", "1_000", "99999999999999999999999"}
	for _, f := range forms {
		for _, v := range odd {
			form := url.Values{}
			for k, vv := range f.base {
				form[k] = vv
			}
			form.Set(f.field, v)
			audits, recorded := auditCount(t, in.DB), changeCount(t, in.DB)
			p := erin.post(f.path, erin.withCSRF(form), nil)
			if p.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s %s=%q: status %d at %s, want 422 on the form", f.path, f.field, v, p.Status, p.URL.Path)
			}
			if a, c := auditCount(t, in.DB)-audits, changeCount(t, in.DB)-recorded; a != 0 || c != 0 {
				t.Errorf("%s %s=%q saved something: %d audit events, %d changes", f.path, f.field, v, a, c)
			}
		}
	}
	if l, _ := models.KeyLimitsOf(ctx, in.DB.Read(), key.ID); l.RPM != 60 || l.TPM != 1000 {
		t.Errorf("the key's limits are %d/%d after the refused forms, want 60/1000", l.RPM, l.TPM)
	}
}
