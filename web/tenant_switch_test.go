package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
)

// TestToolOffForOneTenantRefusesItsProposals: issue_refund switched off
// for acme alone refuses acme's proposals through /v1/actions (403
// tool_disabled, nothing queued) as it refuses its journeys' calls; on
// again, the same proposal is accepted.
func TestToolOffForOneTenantRefusesItsProposals(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	acme := tenantID(t, in, "acme")
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: "p-test"}
	if _, err := catalog.SwitchForTenant(ctx, in.DB, actor, "issue_refund", acme, "acme", false, "provider down"); err != nil {
		t.Fatal(err)
	}
	refund := map[string]any{"tool": "issue_refund", "summary": "Refund $4.16",
		"arguments": map[string]any{"order_id": "ORD-1004", "amount_minor": 416, "currency": "USD", "account": "9182"}}
	before := countRows(t, in.DB, `SELECT COUNT(*) FROM actions`)
	if r := propose(t, in, in.DemoKey, refund, nil); r.Status != http.StatusForbidden || r.code() != "tool_disabled" {
		t.Errorf("proposal while off for acme = %d %s, want 403 tool_disabled", r.Status, r.Raw)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions`); n != before {
		t.Errorf("a refused proposal queued %d actions", n-before)
	}
	if _, err := catalog.SwitchForTenant(ctx, in.DB, actor, "issue_refund", acme, "acme", true, ""); err != nil {
		t.Fatal(err)
	}
	if r := propose(t, in, in.DemoKey, refund, nil); r.Status != http.StatusAccepted {
		t.Errorf("proposal once on again = %d %s, want 202", r.Status, r.Raw)
	}
}
