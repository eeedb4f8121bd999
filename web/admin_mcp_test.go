package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
)

// An admin registers an upstream MCP server on the console, discovers
// its tools (a loopback upstream fails until its host is allowed, and the
// page says why), classifies one for the digest shown, and switches the
// server off; every change is audited and the token is never shown.
func TestAdminMCPServersPage(t *testing.T) {
	in, b := adminSession(t, "erin")
	up := newMCPUpstream(t)
	ctx := context.Background()

	if p := b.get("/mcp-servers"); p.Status != http.StatusOK || text(p, "mcp-servers-empty") == "" {
		t.Fatalf("GET /mcp-servers = %d", p.Status)
	}
	form := url.Values{"name": {"up"}, "url": {up.url}, "token": {"tok-console-secret-9"}, "timeout": {"5000"}, "owner": {"shop team"}}
	if p := b.post("/mcp-servers", form, nil); p.Status != http.StatusForbidden {
		t.Fatalf("POST /mcp-servers without CSRF = %d, want 403", p.Status)
	}
	bad := url.Values{"name": {"Up Server"}, "url": {"ftp://nowhere"}, "timeout": {"soon"}}
	if p := b.post("/mcp-servers", b.withCSRF(bad), nil); p.Status != http.StatusUnprocessableEntity ||
		text(p, "error-name") == "" || text(p, "error-url") == "" || text(p, "error-timeout") == "" {
		t.Fatalf("invalid form = %d, errors %q %q %q", p.Status, text(p, "error-name"), text(p, "error-url"), text(p, "error-timeout"))
	}
	p := b.post("/mcp-servers", b.withCSRF(form), nil)
	if p.Status != http.StatusOK || !strings.HasPrefix(text(p, "notice"), "Server added.") || !strings.Contains(text(p, "mcp-server-up"), "shop team") {
		t.Fatalf("create = %d notice %q", p.Status, text(p, "notice"))
	}
	if strings.Contains(p.Body, "tok-console-secret-9") {
		t.Fatal("the page shows the token")
	}

	p = b.post("/mcp-servers/up/discover", b.withCSRF(url.Values{}), nil)
	if !strings.HasPrefix(text(p, "notice"), "The discovery failed") || !strings.Contains(text(p, "mcp-discovery-error-up"), "allowed hosts") {
		t.Fatalf("discovery of a loopback upstream not allowed: notice %q, error %q", text(p, "notice"), text(p, "mcp-discovery-error-up"))
	}
	if !strings.Contains(p.Body, `class="alert alert-warn" role="alert" data-testid="notice"`) {
		t.Error("a failed discovery is announced in the success style")
	}
	if _, err := models.AllowHosts(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "test"}, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	p = b.post("/mcp-servers/up/discover", b.withCSRF(url.Values{}), nil)
	row := text(p, "mcp-tool-up-lookup_order")
	if !strings.HasPrefix(text(p, "notice"), "Tools discovered.") || !strings.Contains(row, "up__lookup_order") || !strings.Contains(row, "unclassified") ||
		text(p, "mcp-discovery-error-up") != "" {
		t.Fatalf("discover: notice %q, row %q", text(p, "notice"), row)
	}
	digest, _ := p.Doc.Find(`[data-testid="mcp-classify-up-lookup_order"] input[name="digest"]`).Attr("value")
	if digest == "" {
		t.Fatal("the classify form carries no digest")
	}

	stale := url.Values{"tool": {"lookup_order"}, "impact": {"low"}, "reversible": {"on"}, "digest": {"0000"}}
	if p := b.post("/mcp-servers/up/classify", b.withCSRF(stale), nil); p.Status != http.StatusConflict {
		t.Fatalf("classify for a stale digest = %d, want 409", p.Status)
	}
	good := url.Values{"tool": {"lookup_order"}, "impact": {"low"}, "reversible": {"on"}, "digest": {digest}}
	p = b.post("/mcp-servers/up/classify", b.withCSRF(good), nil)
	if !strings.HasPrefix(text(p, "notice"), "Tool classified.") || !strings.Contains(text(p, "mcp-tool-up-lookup_order"), "low impact, reversible") {
		t.Fatalf("classify: notice %q, row %q", text(p, "notice"), text(p, "mcp-tool-up-lookup_order"))
	}
	if tl, _ := mcpservers.GetTool(ctx, in.DB.Read(), "up", "lookup_order"); tl.Impact != mcpservers.ImpactLow || !tl.Reversible {
		t.Fatalf("stored class = %+v", tl)
	}

	// The key form takes a discovered tool's scope and a server pattern,
	// typed; a tool Warden does not know is refused.
	unknown := b.post("/keys", b.withCSRF(url.Values{"tenant": {"acme"}, "name": {"mcp-bot"}, "scope_patterns": {"mcp:up/nope"},
		"rate_per_min": {"60"}, "burst": {"10"}}), nil)
	if unknown.Status != http.StatusUnprocessableEntity || !strings.Contains(text(unknown, "error-scopes"), "not an MCP tool Warden knows") {
		t.Errorf("mcp:up/nope = %d: %q", unknown.Status, text(unknown, "error-scopes"))
	}
	made := b.post("/keys", b.withCSRF(url.Values{"tenant": {"acme"}, "name": {"mcp-bot"}, "scope_patterns": {"mcp:up/lookup_order mcp:other/*"},
		"rate_per_min": {"60"}, "burst": {"10"}}), nil)
	if made.Status != http.StatusOK || !strings.HasSuffix(made.URL.Path, "/created") {
		t.Errorf("a key with MCP scopes = %d at %s: %s", made.Status, made.URL, text(made, "error-scopes"))
	}

	// The server's switch is a kill switch like the others: off asks
	// for a reason first.
	if off := b.get("/mcp-servers"); off.Doc.Find(`[data-testid="mcp-server-up"] a[href="/switches/mcp-servers/up/off"]`).Length() != 1 {
		t.Fatal("the server offers no Switch off… leading to the kill switch")
	}
	if p := b.post("/switches/mcp-servers/up/off", b.withCSRF(url.Values{"reason": {" "}}), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-reason") == "" {
		t.Fatalf("switch off without a reason = %d", p.Status)
	}
	p = b.post("/switches/mcp-servers/up/off", b.withCSRF(url.Values{"reason": {"upstream returns garbage"}}), nil)
	if !strings.HasPrefix(text(p, "notice"), "MCP server switched off") || switchState(p, "mcp-server", "up") != "off" {
		t.Fatalf("disable: notice %q", text(p, "notice"))
	}
	if s, _ := mcpservers.Get(ctx, in.DB.Read(), "up"); s.Enabled {
		t.Fatal("the server is still on")
	}
	if p := b.get("/mcp-servers"); text(p, "mcp-state-up") != "off" || !strings.Contains(text(p, "mcp-server-up"), "upstream returns garbage") {
		t.Errorf("the MCP servers page shows the server %q", text(p, "mcp-state-up"))
	}
	if evs := adminEvents(t, in.DB, "mcp.server_disable"); len(evs) != 1 || evs[0].Details["reason"] != "upstream returns garbage" {
		t.Errorf("mcp.server_disable = %+v", evs)
	}
	for _, verb := range []string{"mcp.server_create", "mcp.discover", "mcp.tool_classify", "mcp.server_disable"} {
		evs := adminEvents(t, in.DB, verb)
		if len(evs) != 1 || evs[0].Actor.Type != audit.ActorPrincipal || strings.Contains(fmt.Sprint(evs[0].Details), "tok-console") {
			t.Errorf("%s events = %+v", verb, evs)
		}
	}
}

type mcpPayIn struct {
	OrderID     string `json:"order_id"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// mcpRegistered registers an MCP server of that name at a real upstream
// (the Go SDK's: lookup_order, issue_refund and pay, which takes an
// amount in minor units and its currency) and discovers its tools.
func mcpRegistered(t *testing.T, in *instance, name string) {
	t.Helper()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "lookup_order", Description: "Look up an order by id."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpOrderIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shipped"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "issue_refund", Description: "Refund an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpRefundIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refunded"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pay", Description: "Pay a supplier for an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpPayIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paid"}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	system := audit.Actor{Type: audit.ActorSystem, ID: "test"}
	if _, err := models.AllowHosts(ctx, in.DB, system, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	sealer := in.Agent.Journeys.Sealer()
	if _, err := mcpservers.Create(ctx, in.DB, sealer, system, mcpservers.Server{Name: name, URL: srv.URL, Timeout: 5 * time.Second, Enabled: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpservers.NewGateway(in.DB, sealer, nil, nil).Discover(ctx, system, name); err != nil {
		t.Fatal(err)
	}
}

// An admin edits a server: bad input keeps what was typed and changes
// nothing; extra headers are sealed, only their names shown, never their
// values (not in the page, not in the audit trail); reserved headers are
// refused with a clear error.
func TestAdminMCPServerEdit(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()
	form := url.Values{"name": {"crm"}, "url": {"https://crm.example.com/mcp"}, "token": {"tok-edit-secret-1"}, "timeout": {"5000"}, "owner": {"crm team"}}
	if p := b.post("/mcp-servers", b.withCSRF(form), nil); p.Status != http.StatusOK {
		t.Fatalf("create = %d", p.Status)
	}
	edit := b.get("/mcp-servers/crm/edit")
	if v, _ := edit.Doc.Find(`#url`).Attr("value"); edit.Status != http.StatusOK || v != "https://crm.example.com/mcp" || strings.Contains(edit.Body, "tok-edit-secret-1") {
		t.Fatalf("edit form = %d, url %q", edit.Status, v)
	}
	const secret = "hdr-value-secret-77"
	updates := func() int { return len(adminEvents(t, in.DB, "mcp.server_update")) }

	bad := url.Values{"url": {"ftp://crm.example.com"}, "timeout": {"5000"}, "owner": {"crm team 2"}, "headers": {"X-Api-Key: " + secret}}
	p := b.post("/mcp-servers/crm/edit", b.withCSRF(bad), nil)
	if v, _ := p.Doc.Find(`#url`).Attr("value"); p.Status != http.StatusUnprocessableEntity || text(p, "error-url") == "" || v != "ftp://crm.example.com" {
		t.Fatalf("bad URL = %d, url kept as %q, error %q", p.Status, v, text(p, "error-url"))
	}
	if owner, _ := p.Doc.Find(`#owner`).Attr("value"); owner != "crm team 2" || strings.Contains(p.Body, secret) {
		t.Errorf("the refused form keeps owner %q, or shows the header's value", owner)
	}
	for _, reserved := range []string{"Authorization: Bearer x", "mcp-session-id: abc", "Host: evil.example.com", "Content-Type: text/plain"} {
		p := b.post("/mcp-servers/crm/edit", b.withCSRF(url.Values{"url": {"https://crm.example.com/mcp"}, "timeout": {"5000"}, "headers": {reserved}}), nil)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-headers"), "line 1") {
			t.Errorf("header %q = %d: %q", reserved, p.Status, text(p, "error-headers"))
		}
	}
	if n := updates(); n != 0 {
		t.Fatalf("refused edits recorded %d updates", n)
	}

	good := url.Values{"url": {"https://crm2.example.com/mcp"}, "timeout": {"7000"}, "owner": {"crm team"}, "headers": {"x-api-key: " + secret + "\nX-Team: shop"}}
	p = b.post("/mcp-servers/crm/edit", b.withCSRF(good), nil)
	if !strings.HasPrefix(text(p, "notice"), "Server saved.") || text(p, "mcp-headers-crm") != "Extra headers: X-Api-Key, X-Team." {
		t.Fatalf("save: notice %q, headers %q", text(p, "notice"), text(p, "mcp-headers-crm"))
	}
	if strings.Contains(p.Body, secret) || strings.Contains(b.get("/mcp-servers/crm/edit").Body, secret) {
		t.Error("a page shows the header's value")
	}
	if s, _ := mcpservers.Get(ctx, in.DB.Read(), "crm"); s.URL != "https://crm2.example.com/mcp" || s.Timeout != 7*time.Second || !s.HasToken {
		t.Errorf("stored %+v", s)
	}
	evs := adminEvents(t, in.DB, "mcp.server_update")
	if d := fmt.Sprint(evs[0].Details); len(evs) != 1 || strings.Contains(d, secret) || strings.Contains(d, "tok-edit") || !strings.Contains(d, "X-Api-Key") {
		t.Errorf("mcp.server_update = %+v", evs)
	}
	var stored string
	in.DB.Read().QueryRowContext(ctx, `SELECT headers_sealed FROM mcp_servers WHERE name = 'crm'`).Scan(&stored)
	if stored == "" || strings.Contains(stored, secret) {
		t.Errorf("headers_sealed = %q", stored)
	}
	// Saving the same again changes and records nothing; the headers stay.
	same := url.Values{"url": {"https://crm2.example.com/mcp"}, "timeout": {"7000"}, "owner": {"crm team"}}
	if p := b.post("/mcp-servers/crm/edit", b.withCSRF(same), nil); !strings.HasPrefix(text(p, "notice"), "Nothing changed") || updates() != 1 ||
		text(p, "mcp-headers-crm") == "" {
		t.Errorf("the same settings again: notice %q, %d updates", text(p, "notice"), updates())
	}
	if p := b.get("/mcp-servers/nope/edit"); p.Status != http.StatusNotFound {
		t.Errorf("edit an unknown server = %d", p.Status)
	}
}

// Classifying a money-moving tool names its amount, currency and target
// arguments, checked against the tool's input schema (the amount an
// integer), and its unit cost; a bad name is refused at the tool's form,
// as typed, and nothing is recorded.
func TestAdminMCPClassifyMoney(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()
	mcpRegistered(t, in, "shop")
	list := b.get("/mcp-servers")
	digest, _ := list.Doc.Find(`[data-testid="mcp-classify-shop-pay"] input[name="digest"]`).Attr("value")
	if digest == "" {
		t.Fatal("the classify form of shop__pay carries no digest")
	}
	classify := func(amount, currency, target, cost string) page {
		return b.post("/mcp-servers/shop/classify", b.withCSRF(url.Values{"tool": {"pay"}, "impact": {"high"}, "digest": {digest},
			"amount_arg": {amount}, "currency_arg": {currency}, "target_arg": {target}, "unit_cost": {cost}}), nil)
	}
	for _, tc := range []struct {
		amount, currency, target, cost, field, says string
	}{
		{"amount", "currency", "order_id", "0.01", "amount_arg", `no property "amount"`},
		{"order_id", "currency", "", "0.01", "amount_arg", "integer"},
		{"amount_minor", "currency", "customer", "0.01", "target_arg", `no property "customer"`},
		{"amount_minor", "", "", "0.01", "currency_arg", "currency"},
		{"amount_minor", "currency", "order_id", "1,50", "unit_cost", "digits"},
	} {
		p := classify(tc.amount, tc.currency, tc.target, tc.cost)
		f := p.Doc.Find(`[data-testid="mcp-classify-shop-pay"]`)
		typed, _ := f.Find(`input[name="target_arg"]`).Attr("value")
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(f.Find(`[data-testid="error-`+tc.field+`"]`).Text(), tc.says) || typed != tc.target {
			t.Errorf("%+v: %d, form %q", tc, p.Status, strings.Join(strings.Fields(f.Text()), " "))
		}
	}
	if n := len(adminEvents(t, in.DB, "mcp.tool_classify")); n != 0 {
		t.Fatalf("refused classifications recorded %d events", n)
	}
	p := classify("amount_minor", "currency", "order_id", "0.25")
	if !strings.HasPrefix(text(p, "notice"), "Tool classified.") || text(p, "mcp-money-shop-pay") != "amount amount_minor (currency); target order_id; costs $0.25 a call" {
		t.Fatalf("classify: notice %q, money %q", text(p, "notice"), text(p, "mcp-money-shop-pay"))
	}
	tl, _ := mcpservers.GetTool(ctx, in.DB.Read(), "shop", "pay")
	if tl.AmountArg != "amount_minor" || tl.CurrencyArg != "currency" || tl.TargetArg != "order_id" || tl.UnitCostMicros != 250000 || tl.Impact != mcpservers.ImpactHigh {
		t.Errorf("stored %+v", tl)
	}
	evs := adminEvents(t, in.DB, "mcp.tool_classify")
	if len(evs) != 1 || evs[0].Details["amount_arg"] != "amount_minor" || evs[0].Details["digest"] != digest {
		t.Errorf("mcp.tool_classify = %+v", evs)
	}
}

// The MCP servers page counts each server's calls and errors of the last
// hour from the audit trail (mcp.call).
func TestAdminMCPServerActivity(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()
	mcpRegistered(t, in, "shop")
	for _, d := range []map[string]any{
		{"server": "shop", "tool": "pay", "outcome": "forwarded", "is_error": false},
		{"server": "shop", "tool": "pay", "outcome": "failed", "is_error": true},
		{"server": "other", "tool": "x", "outcome": "forwarded", "is_error": false},
	} {
		if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
			_, err := audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorKey, ID: "k"}, Verb: "mcp.call",
				Subject: audit.Subject{Type: "mcp_tool", ID: d["server"].(string) + "/" + d["tool"].(string)}, Details: d})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := b.get("/mcp-servers")
	if text(p, "mcp-calls-shop") != "2" || text(p, "mcp-errors-shop") != "1" {
		t.Errorf("last hour: %q", text(p, "mcp-activity-shop"))
	}
	if p.Doc.Find(`[data-testid="mcp-breaker-shop"]`).Length() != 0 {
		t.Error("a breaker is shown though none is known")
	}
}
