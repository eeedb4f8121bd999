package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/owners"
)

// Tools, model deployments and tenants show their owner; changing it waits for a second
// admin (erin asks, frank approves); an owner that is neither an e-mail
// nor group:NAME is refused and nothing is recorded.
func TestOwnersOfToolsAndTenants(t *testing.T) {
	in, erin := adminSession(t, "erin")
	ctx := context.Background()
	d := deployment("chat-a", "echo", 1)
	d.BaseURL = "http://127.0.0.1:9/v1"
	if _, err := models.Create(ctx, in.DB, in.Agent.Journeys.Sealer(), audit.Actor{Type: audit.ActorSystem, ID: "test"}, d, "sk-x"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ object, key, page, owner string }{
		{owners.Tool, "issue_refund", "/tools/issue_refund/edit", "group:payments"},
		{owners.Tenant, "acme", "/tenants/acme", "ana@example.com"},
		{owners.Model, "chat-a", "/models/chat-a/edit", "group:ml-platform"},
	} {
		p := erin.get(tt.page)
		if p.Status != http.StatusOK || text(p, "owner") != "nobody named" {
			t.Fatalf("%s: %d owner %q, want nobody named", tt.page, p.Status, text(p, "owner"))
		}
		// Every change of owner waits: the form does not say tightening
		// applies at once (there is no tightening an owner).
		if got := strings.TrimSpace(p.Doc.Find(`[data-testid="owner-form"] [data-testid="needs-second-admin"]`).Text()); !strings.Contains(got, "any change of owner") || strings.Contains(got, "Tightening") {
			t.Errorf("%s: the owner form says %q, want that any change of owner needs a second admin", tt.page, got)
		}
		events := auditCount(t, in.DB)
		bad := erin.post("/owners/"+tt.object+"/"+tt.key, erin.withCSRF(url.Values{"owner": {"the payments team"}}), nil)
		if bad.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: a bad owner = %d, want 422", tt.key, bad.Status)
		}
		// Back on the object's page, the owner form as typed and why not.
		if typed, _ := bad.Doc.Find(`[data-testid="owner-form"] input[name="owner"]`).Attr("value"); typed != "the payments team" ||
			!strings.Contains(text(bad, "error-owner"), "group:NAME") {
			t.Errorf("%s: a refused owner shows the form with %q and error %q; want what was typed and why", tt.key, typed, text(bad, "error-owner"))
		}
		if auditCount(t, in.DB) != events {
			t.Errorf("%s: a refused owner wrote an audit event", tt.key)
		}
		asked := erin.post("/owners/"+tt.object+"/"+tt.key, erin.withCSRF(url.Values{"owner": {tt.owner}}), nil)
		if o, _ := owners.Get(ctx, in.DB.Read(), tt.object, tt.key); o != "" {
			t.Fatalf("%s: asking changed the owner at once to %q", tt.key, o)
		}
		if p := erin.get(tt.page); !strings.Contains(text(p, "owner-card"), "waiting for a second admin") {
			t.Errorf("%s: the page does not show the pending owner change: %q", tt.page, text(p, "owner-card"))
		}
		approveAsFrank(t, in, asked)
		if p := erin.get(tt.page); text(p, "owner") != tt.owner {
			t.Errorf("%s: owner %q after frank's approval, want %s", tt.page, text(p, "owner"), tt.owner)
		}
	}
	// The list pages name each row's owner under its name, or say it has
	// none; skills and runbooks name theirs in their files.
	for _, tt := range []struct{ page, testid, want string }{
		{"/tools", "tool-owner-issue_refund", "owner group:payments"},
		{"/tools", "tool-owner-lookup_order", "no owner"},
		{"/tenants", "tenant-owner-acme", "owner ana@example.com"},
		{"/models", "model-owner-chat-a", "owner group:ml-platform"},
		{"/skills", "skill-owner-refunds", "owner group:payments"},
		{"/skills", "skill-owner-order_status", "no owner"},
		{"/runbooks", "runbook-owner-bad-release-rollback", "platform-oncall"}, // a column of its own, as before
	} {
		p := erin.get(tt.page)
		if got := text(p, tt.testid); got != tt.want {
			t.Errorf("%s: %s reads %q, want %q", tt.page, tt.testid, got, tt.want)
		}
	}
	// The action page of a refund names its tool's owner.
	a := createActions(t, in, adminTenantBySlug(t, in.DB, "acme"), 1, 5000)[0]
	if p := erin.get("/approvals/" + a.ID); !strings.Contains(text(p, "action-tool-owner"), "group:payments") {
		t.Errorf("the action page does not name the tool's owner: %q", text(p, "action-tool-owner"))
	}
}
