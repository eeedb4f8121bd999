package runbooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
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
// the journeys, and counts retries (the runtime's own tests cover what
// those do).
type expiringRuntime struct {
	db      *store.DB
	retries *[]string // "tenant tool batch actor"
}

func (r expiringRuntime) RetryFailed(_ context.Context, _ *store.Tx, tenantID, tool, batch string, actor audit.Actor, _ string) (execution.RetryReport, error) {
	*r.retries = append(*r.retries, tenantID+" "+tool+" "+batch+" "+actor.ID)
	return execution.RetryReport{Retried: []string{"act_1"}}, nil
}

func (expiringRuntime) Reconcile(context.Context) (ledger.Report, error) { return ledger.Report{}, nil }
func (expiringRuntime) SkillNames(context.Context) ([]string, error)     { return nil, nil }
func (r expiringRuntime) ExpirePending(ctx context.Context, ids []string, actor audit.Actor, reason string) (int, error) {
	return approvals.ExpireNow(ctx, r.db, ids, actor, reason, nil, time.Now())
}

func opsSetup(t *testing.T) (Deps, context.Context, tenants.Tenant) {
	t.Helper()
	d, ctx := setup(t)
	d.Runbooks = loadPublished(t, ctx, d.DB, fstest.MapFS{"ops.md": {Data: []byte(opsRunbook)}})
	d.Runtime = expiringRuntime{db: d.DB, retries: new([]string)}
	var tenant tenants.Tenant
	if err := d.DB.Transact(ctx, func(tx *store.Tx) (err error) {
		tenant, err = tenants.Insert(ctx, tx, "acme", "Acme")
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
	if _, err := budgets.SetAudited(ctx, d.DB, audit.Actor{Type: audit.ActorPrincipal, ID: "admin"},
		budgets.Spec{TenantID: tenant.ID, Period: budgets.Day, LimitMicros: 900_000_000, AlertPercent: 70}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a double submit
		run, err := Run(ctx, d, carol, "ops", "limit", "runaway loop", "tok-limit")
		if err != nil || run.Status != StatusDone {
			t.Fatalf("Run = %+v, %v; want done", run, err)
		}
	}
	b, err := budgets.Get(ctx, d.DB.Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.LimitMicros != 50_000_000 || b.Period != budgets.Day || b.AlertPercent != 70 {
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
		if err := d.DB.Transact(ctx, func(tx *store.Tx) (err error) {
			a, err = approvals.Create(ctx, tx, sealer, approvals.Spec{TenantID: tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprintf("j%d", n), StepN: 1, KeyID: "k1",
				Tool: approvals.Tool{Name: tool, Impact: risk.ImpactHigh, ApprovalTTL: time.Hour}, Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
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

const purgeRunbook = `---
id: pii
title: PII
owner: privacy
severity: high
actions:
  - id: purge
    label: Purge acme's traces of 1 November
    description: deletes them
    tool: purge_traces
    args: {tenant: acme, from: "2026-11-01", to: "2026-11-02"}
---
# PII
`

var (
	dana  = &identity.Principal{ID: "p-dana", Name: "Dana", Roles: []string{identity.RoleOncall, identity.RoleApprover}, Tenants: []string{identity.AllTenants}}
	alice = identity.Principal{ID: "p-alice", Name: "Alice", Roles: []string{identity.RoleApprover}, Tenants: []string{identity.AllTenants}}
)

func purgeSetup(t *testing.T) (Deps, context.Context) {
	t.Helper()
	d, ctx, tenant := opsSetup(t)
	d.Runbooks = loadPublished(t, ctx, d.DB, fstest.MapFS{"pii.md": {Data: []byte(purgeRunbook)}})
	sealer, err := seal.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Sealer = sealer
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	if err := d.DB.Transact(ctx, func(tx *store.Tx) error {
		for id, at := range map[string]time.Time{"before": base.Add(-time.Hour), "inside": base.Add(time.Hour), "after": base.Add(25 * time.Hour)} {
			if _, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, created_at) VALUES (?, ?, 'r', 'c', 'x', 'completed', ?)`,
				id, tenant.ID, store.FormatTime(at)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return d, ctx
}

func journeyIDs(t *testing.T, db *store.DB) []string {
	t.Helper()
	rows, err := db.Read().Query(`SELECT id FROM journeys ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

func TestPurgeWaitsForAnotherApproverAndRunsOnce(t *testing.T) {
	d, ctx := purgeSetup(t)
	var run RunRecord
	for range 2 { // a double submit asks once
		var err error
		run, err = Run(ctx, d, dana, "pii", "purge", "PII in refunds traces", "tok-purge")
		if err != nil || run.Status != StatusAwaiting || run.ActionID == "" || !strings.Contains(run.Outcome, "/approvals/"+run.ActionID) {
			t.Fatalf("Run = %+v, %v; want awaiting approval with the action link", run, err)
		}
	}
	if n := countVerb(t, d.DB, "action.requested"); n != 1 {
		t.Errorf("approval requests = %d, want 1", n)
	}
	if got := journeyIDs(t, d.DB); !slices.Equal(got, []string{"after", "before", "inside"}) {
		t.Fatalf("journeys before approval = %v, want all three", got)
	}
	act, err := approvals.Get(ctx, d.DB.Read(), run.ActionID)
	if err != nil || act.Status != approvals.StatusPending || act.RequestedBy != dana.ID {
		t.Fatalf("action = %+v, %v; want pending, requested by the presser", act, err)
	}
	decide := func(p identity.Principal) error {
		_, err := approvals.Decide(ctx, d.DB, approvals.Request{Principal: p, ActionID: act.ID, Decision: approvals.Approve, Digest: act.PayloadDigest}, Decided(d), time.Now())
		return err
	}
	if err := decide(*dana); !errors.Is(err, approvals.ErrOwnRequest) {
		t.Fatalf("the presser approving = %v, want ErrOwnRequest", err)
	}
	if err := decide(alice); err != nil {
		t.Fatalf("another approver approving = %v", err)
	}
	if err := decide(alice); err == nil {
		t.Fatal("a second approval succeeded")
	}
	if got := journeyIDs(t, d.DB); !slices.Equal(got, []string{"after", "before"}) {
		t.Errorf("journeys after approval = %v, want the range purged", got)
	}
	if n := countVerb(t, d.DB, "traces.purged_range"); n != 1 {
		t.Errorf("purge events = %d, want 1", n)
	}
	if n := countVerb(t, d.DB, "runbook.action"); n != 1 {
		t.Errorf("runbook.action events = %d, want 1", n)
	}
	if n := countVerb(t, d.DB, "action.requested"); n != 1 { // the audit trail is never purged
		t.Errorf("action.requested after the purge = %d, want 1", n)
	}
	got, err := GetRun(ctx, d.DB.Read(), run.ID)
	if err != nil || got.Status != StatusDone || got.AuditSeq == 0 || !strings.Contains(got.Outcome, "Deleted 1 journeys") {
		t.Errorf("run = %+v, %v; want done with the purge's outcome", got, err)
	}
	if a, _ := approvals.Get(ctx, d.DB.Read(), act.ID); a.Status != approvals.StatusExecuted {
		t.Errorf("action = %s, want executed", a.Status)
	}
	if _, err := audit.Verify(ctx, d.DB.Read(), nil); err != nil {
		t.Errorf("audit chain: %v", err)
	}
}

func TestRejectedPurgeChangesNothing(t *testing.T) {
	d, ctx := purgeSetup(t)
	run, err := Run(ctx, d, carol, "pii", "purge", "PII in refunds traces", "tok-purge")
	if err != nil || run.Status != StatusAwaiting {
		t.Fatalf("Run = %+v, %v", run, err)
	}
	act, _ := approvals.Get(ctx, d.DB.Read(), run.ActionID)
	if _, err := approvals.Decide(ctx, d.DB, approvals.Request{Principal: alice, ActionID: act.ID, Decision: approvals.Reject, Comment: "wrong day", Digest: act.PayloadDigest}, Decided(d), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := journeyIDs(t, d.DB); !slices.Equal(got, []string{"after", "before", "inside"}) {
		t.Errorf("journeys after rejection = %v, want all three", got)
	}
	got, _ := GetRun(ctx, d.DB.Read(), run.ID)
	if got.Status != StatusFailed || !strings.Contains(got.Outcome, "Rejected by Alice: wrong day") || got.AuditSeq == 0 {
		t.Errorf("run = %+v, want failed with the rejection", got)
	}
	if n := countVerb(t, d.DB, "traces.purged_range"); n != 0 {
		t.Errorf("purge events = %d, want 0", n)
	}
}

func TestApproverCannotPress(t *testing.T) {
	d, ctx := purgeSetup(t)
	if _, err := Run(ctx, d, &alice, "pii", "purge", "x", "tok"); httpStatus(err) != 403 {
		t.Errorf("an approver pressing = %v, want 403", err)
	}
}

const retryRunbook = `---
id: retry
title: Retry
owner: oncall
severity: high
actions:
  - id: refunds
    label: Retry acme's failed refunds
    description: low impact here
    tool: retry_failed
    args: {tenant: acme, tool: issue_refund}
  - id: payouts
    label: Retry acme's failed payouts
    description: moves money
    tool: retry_failed
    args: {tenant: acme, tool: payout}
---
# Retry
`

func TestRetryFailedNeedsApprovalOnlyForHighImpactTools(t *testing.T) {
	d, ctx := purgeSetup(t)
	d.Runbooks = loadPublished(t, ctx, d.DB, fstest.MapFS{"retry.md": {Data: []byte(retryRunbook)}})
	payout := tools.Tool{Name: "payout", Description: "Pay out", Impact: risk.ImpactHigh, Reversibility: risk.Irreversible,
		Provider: tools.ProviderBuiltin, Timeout: 2 * time.Second, MaxAttempts: 3, ApprovalTTL: time.Hour,
		ArgsSchema: json.RawMessage(`{"type":"object"}`), Enabled: true}
	if err := d.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, payout) }); err != nil {
		t.Fatal(err)
	}
	retries := d.Runtime.(expiringRuntime).retries
	tenant, _ := tenants.BySlug(ctx, d.DB.Read(), "acme")

	for range 2 {
		run, err := Run(ctx, d, dana, "retry", "refunds", "provider back", "tok-refunds")
		if err != nil || run.Status != StatusDone || run.ActionID != "" {
			t.Fatalf("low-impact retry = %+v, %v; want done on press", run, err)
		}
	}
	if len(*retries) != 1 {
		t.Fatalf("retries after the low-impact press = %v, want 1", *retries)
	}

	run, err := Run(ctx, d, dana, "retry", "payouts", "provider back", "tok-payouts")
	if err != nil || run.Status != StatusAwaiting || run.ActionID == "" {
		t.Fatalf("high-impact retry = %+v, %v; want awaiting approval", run, err)
	}
	if len(*retries) != 1 {
		t.Fatalf("the high-impact press retried: %v", *retries)
	}
	act, _ := approvals.Get(ctx, d.DB.Read(), run.ActionID)
	if act.Tool != "runbook:retry_failed" {
		t.Errorf("approval request tool = %s, want runbook:retry_failed", act.Tool)
	}
	req := approvals.Request{Principal: *dana, ActionID: act.ID, Decision: approvals.Approve, Digest: act.PayloadDigest}
	if _, err := approvals.Decide(ctx, d.DB, req, Decided(d), time.Now()); !errors.Is(err, approvals.ErrOwnRequest) {
		t.Fatalf("the presser approving = %v, want ErrOwnRequest", err)
	}
	req.Principal = alice
	if _, err := approvals.Decide(ctx, d.DB, req, Decided(d), time.Now()); err != nil {
		t.Fatal(err)
	}
	if want := tenant.ID + " payout " + run.ID + " " + dana.ID; len(*retries) != 2 || (*retries)[1] != want {
		t.Errorf("retries = %v, want a second one %q", *retries, want)
	}
	if got, _ := GetRun(ctx, d.DB.Read(), run.ID); got.Status != StatusDone || !strings.Contains(got.Outcome, "Retried 1 failed actions") {
		t.Errorf("run = %+v, want done with the retry's outcome", got)
	}
}
