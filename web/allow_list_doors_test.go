package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
)

// TestAllowListAtTheMCPDoor: a tenant's allow-list applies to what the
// MCP door records of a call (its audit event and its trace), as at the
// other doors: acme's term stays readable in acme's records and is
// redacted in another tenant's, and an e-mail address next to it is
// redacted in both. (Model-call records: TestModelCallRecordsReadStructure.)
func TestAllowListAtTheMCPDoor(t *testing.T) {
	in := startWardenDemo(t, nil)
	up := newMCPUpstream(t)
	ctx := context.Background()
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
	sealer := in.Agent.Journeys.Sealer()
	if _, err := mcpservers.Create(ctx, in.DB, sealer, admin, mcpservers.Server{Name: "up", URL: up.url, Timeout: 5 * time.Second, Enabled: true}, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpservers.NewGateway(in.DB, sealer, nil, nil).Discover(ctx, admin, "up"); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, in.DB, admin, "up", "lookup_order", mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
		t.Fatal(err)
	}
	globex := adminTenant(t, in.DB, "globex", "Globex")
	acme, err := adminLookupTenant(in, "acme")
	if err != nil {
		t.Fatal(err)
	}
	const term = "Zorbel Quandt"
	if err := allowlist.Add(ctx, in.DB, admin, acme.ID, "acme", term); err != nil {
		t.Fatal(err)
	}
	_, acmeKey := newKeyIn(t, in, "acme", "lookup-bot", []string{"mcp:up/lookup_order"}, "test")
	_, globexKey := newKeyIn(t, in, globex.Slug, "lookup-bot", []string{"mcp:up/lookup_order"}, "test")
	order := "Ship 3 " + term + " jackets"
	for _, key := range []string{acmeKey, globexKey} {
		if text, isErr := callText(t, mcpSession(t, in, key), "up__lookup_order", map[string]any{"order_id": order, "email": "zorbel.q@example.com"}); isErr {
			t.Fatalf("call = %q", text)
		}
	}
	records := func(tenantID, slug string) string {
		t.Helper()
		ev, err := storeStrings(in, `SELECT details FROM audit_events WHERE verb = 'mcp.call' AND tenant = '`+slug+`'`)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := storeStrings(in, `SELECT s.arguments || ' ' || s.result FROM journey_steps s JOIN journeys j ON j.id = s.journey_id WHERE j.tenant_id = '`+tenantID+`' AND j.skill = 'mcp:up'`)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev) != 1 || len(steps) != 1 {
			t.Fatalf("%s: %d audit events, %d trace steps, want 1 and 1", slug, len(ev), len(steps))
		}
		return ev[0] + "\n" + steps[0]
	}
	a, g := records(acme.ID, "acme"), records(globex.ID, "globex")
	if strings.Count(a, term) < 3 { // the event's arguments and result, the step's
		t.Errorf("acme's records redacted its allow-listed term:\n%s", a)
	}
	if strings.Contains(g, term) || strings.Contains(g, "Quandt") {
		t.Errorf("globex's records show acme's term:\n%s", g)
	}
	if strings.Contains(a+g, "zorbel.q@example.com") {
		t.Errorf("the allow-list un-redacted an e-mail address:\n%s\n%s", a, g)
	}
}
