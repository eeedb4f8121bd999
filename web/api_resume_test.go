package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/catalog"
	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/identity"
)

// TestJourneyResumesWithoutRerunningSteps: the order lookup that ran before
// the approval is replayed from the journal, not called again, when the
// approved refund executes and the journey finishes.
func TestJourneyResumesWithoutRerunningSteps(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	var lookups atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lookups.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"order_id": "ORD-1005", "status": "delivered", "amount_minor": 4550, "currency": "USD",
			"account": "FR7630004008230001234567819", "account_last4": "7819", "customer_email": "camille.moreau@example.com"})
	}))
	defer srv.Close()
	lookup, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order")
	lookup.Provider, lookup.WebhookURL = tools.ProviderHTTP, srv.URL
	in.DB.Transact(ctx, func(tx *sql.Tx) error { return catalog.Upsert(ctx, tx, lookup) })

	r := journey(t, in, in.DemoKey, "The customer was charged twice for ORD-1005, refund $45.50 please", nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("refund journey = %d %s", r.Status, r.Raw)
	}
	if lookups.Load() != 1 {
		t.Fatalf("lookups before approval = %d, want 1", lookups.Load())
	}
	action := r.Body["action"].(map[string]any)
	a, _ := approvals.Get(ctx, in.DB.Read(), action["id"].(string))
	alice := identity.Principal{ID: "p-a", Name: "A", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	if _, err := in.Agent.Service.Decide(ctx, approvals.Request{Principal: alice, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest}); err != nil {
		t.Fatal(err)
	}
	var g apiResp
	deadline := time.Now().Add(15 * time.Second)
	for {
		g = callAPI(t, ctx, http.MethodGet, in.URL+"/v1/journeys/"+r.str("id"), in.DemoKey, nil, nil)
		if g.str("status") == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if g.str("status") != "completed" || g.str("output") == "" {
		t.Fatalf("journey after approval = %s", g.Raw)
	}
	if lookups.Load() != 1 {
		t.Errorf("lookups after the journey resumed = %d, want still 1 (replayed from the journal)", lookups.Load())
	}
	steps := g.Body["steps"].([]any)
	last := steps[len(steps)-1].(map[string]any)
	if last["tool"] != "issue_refund" || last["status"] != "ok" || last["result"] == nil {
		t.Errorf("last step = %v, want the executed refund with its receipt", last)
	}
}
