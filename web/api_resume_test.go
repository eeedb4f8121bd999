package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
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
	in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, lookup) })

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
	if _, err := in.Agent.Execution.Decide(ctx, approvals.Request{Principal: alice, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest}); err != nil {
		t.Fatal(err)
	}
	var g apiResp
	wait.For(15*time.Second, func() bool {
		g = callAPI(t, ctx, http.MethodGet, in.URL+"/v1/journeys/"+r.str("id"), in.DemoKey, nil, nil)
		return g.str("status") == "completed"
	})
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

// TestApprovedActionsAreChargedAndNeverOverspend: the approval reserves
// the action's cost; an approval the budget cannot cover is refused and
// records nothing.
func TestApprovedActionsAreChargedAndNeverOverspend(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	tenant, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	refund, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund")
	rows, _, _ := approvals.List(ctx, in.DB.Read(), approvals.Filter{}, time.Now())
	var small approvals.Action
	for _, r := range rows.Rows {
		if r.ApprovalsRequired == 1 {
			small = r.Action
		}
	}
	before, _ := budgets.Get(ctx, in.DB.Read(), tenant.ID)

	// A budget with less left than the refund's cost: the approval fails.
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`UPDATE budgets SET limit_micros = spent_micros + reserved_micros + ?`, refund.UnitCostMicros-1)
		return err
	})
	alice := identity.Principal{ID: "p-a", Name: "A", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	_, err := in.Agent.Execution.Decide(ctx, approvals.Request{Principal: alice, ActionID: small.ID, Decision: approvals.Approve, Digest: small.PayloadDigest})
	if !errors.Is(err, execution.ErrBudget) {
		t.Fatalf("approval over budget = %v, want ErrBudget", err)
	}
	if got, _ := approvals.Get(ctx, in.DB.Read(), small.ID); got.Status != approvals.StatusPending {
		t.Fatalf("refused approval left the action %s", got.Status)
	}
	if ds, _ := approvals.Decisions(ctx, in.DB.Read(), small.ID); len(ds) != 0 {
		t.Fatal("a refused approval recorded a decision")
	}

	// With room, the execution's cost is charged.
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`UPDATE budgets SET limit_micros = ?`, before.LimitMicros)
		return err
	})
	if _, err := in.Agent.Execution.Decide(ctx, approvals.Request{Principal: alice, ActionID: small.ID, Decision: approvals.Approve, Digest: small.PayloadDigest}); err != nil {
		t.Fatal(err)
	}
	waitAction(t, in, small.ID, approvals.StatusExecuted)
	after, _ := budgets.Get(ctx, in.DB.Read(), tenant.ID)
	if after.SpentMicros != before.SpentMicros+refund.UnitCostMicros || after.ReservedMicros != before.ReservedMicros {
		t.Errorf("budget spent %d→%d reserved %d→%d; want the refund's cost charged and nothing left reserved",
			before.SpentMicros, after.SpentMicros, before.ReservedMicros, after.ReservedMicros)
	}
}
