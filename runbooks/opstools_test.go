package runbooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/agent/budget"
	"github.com/wardenhq/warden/agent/ledger"
	"github.com/wardenhq/warden/agent/seal"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
)

const opsRunbook = `---
id: ops
title: Ops
owner: oncall
severity: high
actions:
  - id: limit
    label: Set acme's budget to 50
    description: caps spend
    tool: set_budget_limit
    args: {tenant: acme, limit: "50.00"}
  - id: expire
    label: Expire acme's pending refunds
    description: ends the queue
    tool: expire_pending
    args: {tenant: acme, tool: issue_refund}
---
# Ops
`

// expiringRuntime expires through approvals like the runtime, without
// the journeys (the runtime's own tests cover those).
type expiringRuntime struct{ db *store.DB }

func (expiringRuntime) Reconcile(context.Context) (ledger.Report, error) { return ledger.Report{}, nil }
func (expiringRuntime) SkillNames(context.Context) ([]string, error)     { return nil, nil }
func (r expiringRuntime) ExpirePending(ctx context.Context, ids []string, actor audit.Actor, reason string) (int, error) {
	return approvals.ExpireNow(ctx, r.db, ids, actor, reason, nil, time.Now())
}

func opsSetup(t *testing.T) (Deps, context.Context, store.Tenant) {
	t.Helper()
	d, ctx := setup(t)
	set, problems := Load(fstest.MapFS{"ops.md": {Data: []byte(opsRunbook)}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	d.Runbooks = set
	d.Runtime = expiringRuntime{d.DB}
	var tenant store.Tenant
	if err := d.DB.Transact(ctx, func(tx *sql.Tx) (err error) {
		tenant, err = store.CreateTenant(ctx, tx, "acme", "Acme")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return d, ctx, tenant
}

func countVerb(t *testing.T, db *store.DB, verb string) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM audit_events WHERE verb = ?`, verb).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSetBudgetLimitKeepsPeriodAndRunsOnce(t *testing.T) {
	d, ctx, tenant := opsSetup(t)
	if _, err := budget.SetAudited(ctx, d.DB, audit.Actor{Type: audit.ActorPrincipal, ID: "admin"},
		budget.Spec{TenantID: tenant.ID, Period: budget.Day, LimitMicros: 900_000_000, AlertPercent: 70}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a double submit
		run, err := Run(ctx, d, carol, "ops", "limit", "runaway loop", "tok-limit")
		if err != nil || run.Status != StatusDone {
			t.Fatalf("Run = %+v, %v; want done", run, err)
		}
	}
	b, err := budget.Get(ctx, d.DB.Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.LimitMicros != 50_000_000 || b.Period != budget.Day || b.AlertPercent != 70 {
		t.Errorf("budget = %d %s %d%%, want 50000000 day 70%%", b.LimitMicros, b.Period, b.AlertPercent)
	}
	if n := countVerb(t, d.DB, "budget.set"); n != 2 { // the admin's and the runbook's
		t.Errorf("budget.set events = %d, want 2", n)
	}
	if n := countVerb(t, d.DB, "runbook.action"); n != 1 {
		t.Errorf("runbook.action events = %d, want 1", n)
	}
}

func TestExpirePendingExpiresTheTenantsPendingOfTheTool(t *testing.T) {
	d, ctx, tenant := opsSetup(t)
	dir := t.TempDir()
	sealer, err := seal.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	create := func(tool string, n int) approvals.Action {
		var a approvals.Action
		if err := d.DB.Transact(ctx, func(tx *sql.Tx) (err error) {
			a, err = approvals.Create(ctx, tx, sealer, approvals.Spec{TenantID: tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprintf("j%d", n), StepN: 1, KeyID: "k1",
				Tool: approvals.Tool{Name: tool, Impact: approvals.ImpactHigh, ApprovalTTL: time.Hour}, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
				ArgsRedacted: json.RawMessage(`{}`), Summary: tool, Rule: "high", ApprovalsRequired: 1}, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a
	}
	r1, r2, other := create("issue_refund", 1), create("issue_refund", 2), create("send_email", 3)
	for range 2 {
		run, err := Run(ctx, d, carol, "ops", "expire", "refund queue poisoned", "tok-expire")
		if err != nil || run.Status != StatusDone || run.Outcome != "Expired 2 pending actions of tenant acme." {
			t.Fatalf("Run = %+v, %v", run, err)
		}
	}
	for id, want := range map[string]string{r1.ID: approvals.StatusExpired, r2.ID: approvals.StatusExpired, other.ID: approvals.StatusPending} {
		if a, _ := approvals.Get(ctx, d.DB.Read(), id); a.Status != want {
			t.Errorf("action %s = %s, want %s", id, a.Status, want)
		}
	}
	if n := countVerb(t, d.DB, "action.expired"); n != 2 {
		t.Errorf("action.expired events = %d, want 2", n)
	}
}
