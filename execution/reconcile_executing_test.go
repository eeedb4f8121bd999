package execution

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/tools"
)

// An approved refund's replica got as far as the ledger's record of the
// provider's receipt and died before marking the action executed: the
// action reads executing, paid, and its job waits for the queue's rescue.
// The reconciler finishes it from the recorded receipt once it has been
// left alone for the grace — executed, with the receipt, its journey
// completed, one action.executed event, nothing paid twice — and a second
// run changes nothing.
func TestReconcileFinishesAnExecutingActionWhoseEffectIsRecorded(t *testing.T) {
	r := newRig(t)
	out := r.approved(refundRequest)
	a := r.action(out.Action.ID)

	// What the dead replica did: started executing, and the ledger
	// recorded the provider's receipt.
	if _, err := approvals.StartExecuting(r.ctx, r.db, a.ID, r.clock()); err != nil {
		t.Fatal(err)
	}
	args, err := approvals.OpenArgs(r.ctx, r.db.Read(), r.sealer, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := catalog.Get(r.ctx, r.db.Read(), a.Tool)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := approvals.PayloadDigest(tool.Name, args)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := ledger.Execute(r.ctx, r.db, r.ex.o.Providers[tool.Provider], tool,
		tools.Call{Tool: tool.Name, Args: args, IdempotencyKey: a.IdempotencyKey, Tenant: r.tenant.Slug}, digest)
	if err != nil || entry.State != ledger.Recorded {
		t.Fatalf("ledger.Execute = %s, %v; want recorded", entry.State, err)
	}

	// Within the grace the action may still be finishing on its replica.
	rep, err := r.ex.Reconcile(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Completed) != 0 || r.action(a.ID).Status != approvals.StatusExecuting {
		t.Fatalf("within the grace: completed %v, action %s; want it left executing", rep.Completed, r.action(a.ID).Status)
	}

	r.advance(reconcileGrace + time.Second)
	rep, err = r.ex.Reconcile(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Completed) != 1 || rep.Completed[0] != a.IdempotencyKey {
		t.Errorf("Reconcile completed %v, want [%s]", rep.Completed, a.IdempotencyKey)
	}
	done := r.action(a.ID)
	if done.Status != approvals.StatusExecuted || field(t, done.Receipt, "refund_id") == "" {
		t.Errorf("action %s with receipt %s, want executed with the provider's refund", done.Status, done.Receipt)
	}
	if j := r.journey(out.Journey.ID); j.Status != journeys.StatusCompleted {
		t.Errorf("journey %s, want completed", j.Status)
	}
	if n := r.effects("issue_refund"); n != 1 {
		t.Errorf("%d refunds at the provider, want 1", n)
	}

	// Once: a second run finds nothing to do.
	if rep, err = r.ex.Reconcile(r.ctx); err != nil || len(rep.Completed) != 0 {
		t.Errorf("second Reconcile: completed %v, %v; want nothing", rep.Completed, err)
	}
	var events int
	if err := r.db.Read().QueryRowContext(r.ctx, `SELECT COUNT(*) FROM audit_events WHERE verb = 'action.executed' AND subject_id = ?`,
		a.ID).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if events != 1 {
		t.Errorf("%d action.executed events, want 1", events)
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Errorf("%d micro-units still reserved, want 0 (the action's cost settled)", b.ReservedMicros)
	}
}
