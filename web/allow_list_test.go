package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// TestAllowListPerTenant: an admin puts a term on acme's allow-list on the
// console (CSRF, confirmation to remove); the term stays readable in the
// stored action of acme's agent and is still redacted for another tenant;
// an e-mail address in the same text stays redacted; an e-mail address
// cannot be put on the list at all.
func TestAllowListPerTenant(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	if err := catalog.Create(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "test"}, tools.Tool{Name: "ship_order", Impact: risk.ImpactHigh,
		Reversibility: risk.Irreversible, Provider: tools.ProviderExternal, Timeout: time.Second, MaxAttempts: 1, ApprovalTTL: time.Hour,
		ArgsSchema: []byte(`{"type":"object"}`), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	globex := adminTenant(t, in.DB, "globex", "Globex")
	admin := newBrowser(t, in.URL)
	admin.loginDev("erin")
	const term = "Zorbel Quandt"
	if p := admin.post("/tenants/acme/allow-list", url.Values{"term": {term}}, nil); p.Status == http.StatusSeeOther || p.Status == http.StatusOK && strings.Contains(p.Body, term) {
		t.Fatalf("added without a CSRF token: %d", p.Status)
	}
	if p := admin.post("/tenants/acme/allow-list", admin.withCSRF(url.Values{"term": {"jane@example.com"}}), nil); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("an e-mail address as a term = %d", p.Status)
	}
	p := admin.post("/tenants/acme/allow-list", admin.withCSRF(url.Values{"term": {term}}), nil)
	if p.Status != http.StatusOK || p.Doc.Find(`[data-testid="allow-table"]`).Text() == "" || !strings.Contains(p.Doc.Find(`[data-testid="allow-table"]`).Text(), term) {
		t.Fatalf("add = %d %s", p.Status, p.Body)
	}
	if len(adminEvents(t, in.DB, "allow_list.add")) != 1 {
		t.Error("no allow_list.add event")
	}

	text := "Ship 3 " + term + " jackets to zorbel.q@example.com"
	propose1 := func(tenantID string) string {
		var secrets keys.Secrets
		if err := in.DB.Transact(ctx, func(tx *store.Tx) (err error) {
			_, secrets, err = keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: tenantID, Name: "ship", Scopes: []string{"tool:ship_order"},
				RatePerMin: 600, Burst: 60, CreatedBy: "test"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		r := propose(t, in, secrets.Key, map[string]any{"tool": "ship_order", "arguments": map[string]any{"note": text}, "summary": text, "reason": "ship"}, nil)
		if r.Status != http.StatusAccepted {
			t.Fatalf("propose = %d %s", r.Status, r.Raw)
		}
		return r.str("id")
	}
	acme, err := adminLookupTenant(in, "acme")
	if err != nil {
		t.Fatal(err)
	}
	a := getAction(t, in, propose1(acme.ID))
	g := getAction(t, in, propose1(globex.ID))
	if !strings.Contains(a.AgentSummary, term) || !strings.Contains(string(a.ArgumentsRedacted), term) {
		t.Errorf("acme's action redacted its allow-listed term: %q %s", a.AgentSummary, a.ArgumentsRedacted)
	}
	if strings.Contains(a.AgentSummary, "zorbel.q@example.com") || strings.Contains(string(a.ArgumentsRedacted), "example.com") {
		t.Errorf("the allow-list un-redacted an e-mail address: %q", a.AgentSummary)
	}
	if strings.Contains(g.AgentSummary, term) || strings.Contains(string(g.ArgumentsRedacted), term) {
		t.Errorf("another tenant's action shows acme's term: %q %s", g.AgentSummary, g.ArgumentsRedacted)
	}

	// Removal asks first, then takes it off.
	confirm := admin.get("/tenants/acme/allow-list/remove?term=" + url.QueryEscape(term))
	if confirm.Status != http.StatusOK || !strings.Contains(confirm.Body, "off the allow-list") {
		t.Fatalf("confirm = %d", confirm.Status)
	}
	done := admin.post("/tenants/acme/allow-list/remove", admin.withCSRF(url.Values{"term": {term}}), nil)
	if done.Status != http.StatusOK || done.Doc.Find(`[data-testid="allow-empty"]`).Length() != 1 {
		t.Fatalf("remove = %d", done.Status)
	}
	// An approver cannot open the page.
	approver := newBrowser(t, in.URL)
	approver.loginDev("alice")
	if p := approver.get("/tenants/acme/allow-list"); p.Status != http.StatusForbidden && p.Status != http.StatusNotFound {
		t.Errorf("an approver opened the allow-list: %d", p.Status)
	}
}
