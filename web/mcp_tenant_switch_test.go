package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// A tool of an MCP server switched off for one tenant (the per-tenant
// switch on-call uses when one tenant's calls fail) refuses that tenant's
// calls through /mcp with tool_disabled, as a tool error the agent's
// model reads, without reaching the upstream; another tenant's calls of
// the same tool go through, and switching it back on lets the first
// tenant call again.
func TestMCPDoorHonoursTheTenantToolSwitch(t *testing.T) {
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
	for tool, impact := range map[string]string{"lookup_order": mcpservers.ImpactLow, "issue_refund": mcpservers.ImpactHigh} {
		if err := mcpservers.Classify(ctx, in.DB, admin, "up", tool, mcpservers.Class{Impact: impact}); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tenants.Insert(ctx, tx, "globex", "Globex")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, acmeKey := newKeyIn(t, in, "acme", "acme-shop-bot", []string{"mcp:up/*"}, "test")
	_, globexKey := newKeyIn(t, in, "globex", "globex-shop-bot", []string{"mcp:up/*"}, "test")
	acme := tenantID(t, in, "acme")

	// Only real tools may be switched: a catalog tool or a listed MCP tool.
	if _, err := catalog.SwitchForTenant(ctx, in.DB, admin, "up__nope", acme, "acme", false, "typo"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("switching off an unknown MCP tool = %v, want not found", err)
	}
	for _, tool := range []string{"up__lookup_order", "up__issue_refund"} {
		if changed, err := catalog.SwitchForTenant(ctx, in.DB, admin, tool, acme, "acme", false, "provider failing for acme"); err != nil || !changed {
			t.Fatalf("switch %s off for acme: %v, changed %v", tool, err, changed)
		}
	}

	lookup := map[string]any{"order_id": "A1"}
	text, isErr := callText(t, mcpSession(t, in, acmeKey), "up__lookup_order", lookup)
	if !isErr || !strings.Contains(text, "tool_disabled") || !strings.Contains(text, "switched off for tenant acme") || up.calls.Load() != 0 {
		t.Errorf("acme's call of a tool off for acme = %q (error %v), %d upstream calls; want refused with tool_disabled", text, isErr, up.calls.Load())
	}
	// A high-impact call is refused at once, not queued for approval.
	// (Bounded: a call that is not refused waits for an approval.)
	bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
	res, err := mcpSession(t, in, acmeKey).CallTool(bounded, &mcp.CallToolParams{Name: "up__issue_refund", Arguments: map[string]any{"order_id": "A1", "amount_minor": 100}})
	cancel()
	if err != nil || !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "tool_disabled") ||
		countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE tool = 'up__issue_refund'`) != 0 || up.calls.Load() != 0 {
		t.Errorf("acme's high-impact call of a tool off for acme = %v, %v; want refused at once with tool_disabled, no action", res, err)
	}
	var details string
	if err := in.DB.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'mcp.call' AND subject_id = 'up/lookup_order' ORDER BY seq DESC LIMIT 1`).Scan(&details); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(details, `"outcome":"refused"`) {
		t.Errorf("audit of the refused call = %s, want outcome refused", details)
	}

	text, isErr = callText(t, mcpSession(t, in, globexKey), "up__lookup_order", lookup)
	if isErr || !strings.HasPrefix(text, "order A1 shipped") || up.calls.Load() != 1 {
		t.Errorf("globex's call = %q (error %v), %d upstream calls; want forwarded", text, isErr, up.calls.Load())
	}

	// On-call switches it back on for acme from Kill switches.
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if p := carol.get("/switches"); !strings.Contains(p.Body, "up__lookup_order") {
		t.Error("Kill switches does not list the MCP tool switched off for acme")
	}
	// Switching back on loosens: it waits for a second admin
	// (docs/changes.md) and applies once frank approves.
	r := carol.post("/switches/tool/up__lookup_order/tenants/acme/on", carol.withCSRF(url.Values{}), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("switch up__lookup_order back on for acme = %d", r.Status)
	}
	if text, isErr := callText(t, mcpSession(t, in, acmeKey), "up__lookup_order", lookup); !isErr || !strings.Contains(text, "tool_disabled") {
		t.Errorf("acme's call before a second admin approved = %q, want still refused", text)
	}
	approveAsFrank(t, in, r)
	text, isErr = callText(t, mcpSession(t, in, acmeKey), "up__lookup_order", lookup)
	if isErr || !strings.HasPrefix(text, "order A1 shipped") || up.calls.Load() != 2 {
		t.Errorf("acme's call after switching back on = %q (error %v), %d upstream calls; want forwarded", text, isErr, up.calls.Load())
	}
}
