package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// TestAnotherTenantsOrdersAreUnknown: the simulated shop's orders are
// acme's. A key of a second tenant, through the real API, cannot read
// acme's ORD-1003 (its customer's name and address never leave) nor
// propose a refund of acme's ORD-1004, and an action on that order that
// reached the queue anyway is refused by the provider when approved,
// paying nothing. acme's key still can do all three.
func TestAnotherTenantsOrdersAreUnknown(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	var globex tenants.Tenant
	var secret string
	err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if globex, err = tenants.Insert(ctx, tx, "globex", "Globex"); err != nil {
			return err
		}
		if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: globex.ID, Period: budgets.Month, LimitMicros: 100_000_000, AlertPercent: 80}, time.Now()); err != nil {
			return err
		}
		_, secrets, err := keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: globex.ID, Name: "globex agent",
			Scopes: []string{"skill:order_status", "tool:lookup_order", "tool:issue_refund"}, RatePerMin: 600, Burst: 60, CreatedBy: "test"})
		secret = secrets.Key
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	order := sim.DemoOrders()[2] // ORD-1003, acme's
	if order.ID != "ORD-1003" {
		t.Fatalf("demo order 3 is %s", order.ID)
	}

	// Reading: globex's journey fails on an unknown order; acme's works.
	r := journey(t, in, secret, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusUnprocessableEntity || r.code() != "tool_refused" || !strings.Contains(string(r.Raw), "unknown order ORD-1003") {
		t.Errorf("globex's journey on ORD-1003 = %d %s, want 422 tool_refused, unknown order", r.Status, r.Raw)
	}
	for _, leak := range []string{order.CustomerName, "Prinsengracht", order.Status, order.Items[0].Name} {
		if strings.Contains(string(r.Raw), leak) {
			t.Errorf("globex's answer shows acme's %q: %s", leak, r.Raw)
		}
	}
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.Status != http.StatusOK || r.str("status") != "completed" {
		t.Errorf("acme's journey on ORD-1003 = %d %s, want completed", r.Status, r.Raw)
	}

	// Proposing: refused before any approver is asked or any total counts it.
	refund := map[string]any{"tool": "issue_refund", "summary": "Refund $4.16",
		"arguments": map[string]any{"order_id": "ORD-1004", "amount_minor": 416, "currency": "USD", "account": "9182"}}
	if r := propose(t, in, secret, refund, nil); r.Status != http.StatusUnprocessableEntity || r.code() != "tool_refused" ||
		!strings.Contains(string(r.Raw), "unknown order ORD-1004") {
		t.Errorf("globex's proposal on ORD-1004 = %d %s, want 422 tool_refused, unknown order", r.Status, r.Raw)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE tenant_id = ?`, globex.ID); n != 0 {
		t.Errorf("globex has %d actions after a refused proposal, want 0", n)
	}
	if r := propose(t, in, in.DemoKey, refund, nil); r.Status != http.StatusAccepted || r.str("status") != "pending" {
		t.Errorf("acme's proposal on ORD-1004 = %d %s, want 202 pending", r.Status, r.Raw)
	}

	// Executing: an action on acme's order in globex's queue (recorded
	// directly, as one proposed before the provider knew tenants) fails
	// when globex's approver approves it, and pays nothing.
	before, err := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := catalog.Get(ctx, in.DB.Read(), sim.ToolIssueRefund)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(refund["arguments"])
	minor := int64(416)
	var stray approvals.Action
	err = in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		stray, err = approvals.Create(ctx, tx, in.Agent.Journeys.Sealer(), approvals.Spec{
			TenantID: globex.ID, TenantSlug: globex.Slug, JourneyID: "jrn_test_globex", StepN: 1, Tool: catalog.ForApproval(tool),
			Args: args, ArgsRedacted: args, Summary: "Refund $4.16 for ORD-1004", AmountMinor: &minor, Currency: "USD",
			Reason: "test", Rule: "test rule", ApprovalsRequired: 1, IdempotencyKey: "ext_globex_stray",
		}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	approver := identity.Principal{ID: "p-gina", Name: "Gina", Roles: []string{"approver"}, Tenants: []string{"globex"}}
	if _, err := in.Agent.Execution.Decide(ctx, approvals.Request{Principal: approver, ActionID: stray.ID, Decision: approvals.Approve, Digest: stray.PayloadDigest}); err != nil {
		t.Fatal(err)
	}
	a := waitAction(t, in, stray.ID, approvals.StatusFailed)
	if !strings.Contains(a.Failure, "unknown order ORD-1004") {
		t.Errorf("globex's approved refund failed with %q, want unknown order", a.Failure)
	}
	after, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund)
	res, err := in.Agent.Sim.Execute(ctx, tools.Tool{Name: sim.ToolLookupOrder},
		tools.Call{Tool: sim.ToolLookupOrder, Args: json.RawMessage(`{"order_id":"ORD-1004"}`), Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var o sim.Order
	json.Unmarshal(res.Output, &o)
	if after != before || o.RefundedMinor != 0 {
		t.Errorf("after globex's refund: %d refunds (was %d), acme's ORD-1004 refunded %d; want none", after, before, o.RefundedMinor)
	}
}

// waitAction waits up to 15 s for action id to reach status.
func waitAction(t *testing.T, in *instance, id, status string) approvals.Action {
	t.Helper()
	var a approvals.Action
	if !wait.For(15*time.Second, func() bool { a = getAction(t, in, id); return a.Status == status }) {
		t.Fatalf("action %s is %s, want %s", id, a.Status, status)
	}
	return a
}
