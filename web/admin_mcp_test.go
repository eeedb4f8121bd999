package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
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

	p = b.post("/mcp-servers/up/disable", b.withCSRF(url.Values{}), nil)
	if !strings.HasPrefix(text(p, "notice"), "Server switched off") || text(p, "mcp-enable-up") == "" {
		t.Fatalf("disable: notice %q", text(p, "notice"))
	}
	if s, _ := mcpservers.Get(ctx, in.DB.Read(), "up"); s.Enabled {
		t.Fatal("the server is still on")
	}
	for _, verb := range []string{"mcp.server_create", "mcp.discover", "mcp.tool_classify", "mcp.server_disable"} {
		evs := adminEvents(t, in.DB, verb)
		if len(evs) != 1 || evs[0].Actor.Type != audit.ActorPrincipal || strings.Contains(fmt.Sprint(evs[0].Details), "tok-console") {
			t.Errorf("%s events = %+v", verb, evs)
		}
	}
}
