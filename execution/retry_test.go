package execution

import (
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
)

// A failed action whose effect never reached the provider runs again
// under its own key, once, and its journey completes; one whose effect
// may have reached the provider is left to reconciliation.
func TestRetryFailedReusesTheKeyAndSparesReservedEffects(t *testing.T) {
	r := newRig(t)
	never := r.approved(refundRequest)
	maybe := r.approved(otherRefundRequest)
	r.setEnabled("issue_refund", false)
	for _, id := range []string{never.Action.ID, maybe.Action.ID} {
		if err := r.ex.ExecuteAction(r.ctx, id); err != nil {
			t.Fatal(err)
		}
		if a := r.action(id); a.Status != approvals.StatusFailed {
			t.Fatalf("action %s = %s, want failed", id, a.Status)
		}
	}
	// As if an earlier attempt had reached the provider.
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`UPDATE effects SET state = 'reserved', attempts = 1 WHERE action_id = ?`, maybe.Action.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.setEnabled("issue_refund", true)
	oncallActor := audit.Actor{Type: audit.ActorPrincipal, ID: oncall.ID}
	retry := func(batch string) RetryReport {
		var rep RetryReport
		if err := r.db.Transact(r.ctx, func(tx *store.Tx) (err error) {
			rep, err = r.ex.RetryFailed(r.ctx, tx, r.tenant.ID, "issue_refund", batch, oncallActor, "provider back")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := retry("run-1")
	if !slices.Equal(rep.Retried, []string{never.Action.ID}) || !slices.Equal(rep.Reconcile, []string{maybe.Action.ID}) || len(rep.Skipped) != 0 {
		t.Fatalf("RetryFailed = %+v; want %s retried, %s to reconcile", rep, never.Action.ID, maybe.Action.ID)
	}
	if again := retry("run-2"); len(again.Retried) != 0 {
		t.Errorf("a second retry retried %v, want nothing (no longer failed)", again.Retried)
	}
	jobs := 0
	for _, k := range r.jobKeys() {
		if rest, ok := strings.CutPrefix(k, "exec:"); ok && strings.Contains(rest, ":retry:") { // LIKE 'exec:%:retry:%'

			jobs++
		}
	}
	if jobs != 1 {
		t.Errorf("retry jobs = %d, want 1", jobs)
	}
	if j := r.journey(never.Journey.ID); j.Status != journeys.StatusAwaitingApproval {
		t.Errorf("journey = %s, want awaiting approval again", j.Status)
	} else if last := j.Steps[len(j.Steps)-1]; last.Status != journeys.StatusAwaitingApproval || last.Error != "" {
		t.Errorf("approval step = %s (%q), want awaiting approval again, no error", last.Status, last.Error)
	}
	if b := r.budget(); b.ReservedMicros == 0 {
		t.Error("the retried action's cost is not reserved again")
	}
	if err := r.ex.ExecuteAction(r.ctx, never.Action.ID); err != nil {
		t.Fatal(err)
	}
	a := r.action(never.Action.ID)
	calls := r.hooks.callsOf("issue_refund")
	if a.Status != approvals.StatusExecuted || len(calls) != 1 || calls[0].IdempotencyKey != never.Action.IdempotencyKey || r.effects("issue_refund") != 1 {
		t.Errorf("after retry: action %s, %d calls (key %v), %d effects; want executed once under %s",
			a.Status, len(calls), calls, r.effects("issue_refund"), never.Action.IdempotencyKey)
	}
	if j := r.journey(never.Journey.ID); j.Status != journeys.StatusCompleted {
		t.Errorf("journey = %s, want completed", j.Status)
	} else if last := j.Steps[len(j.Steps)-1]; last.Status != "ok" {
		t.Errorf("approval step = %s, want ok", last.Status)
	}
	if m := r.journey(maybe.Journey.ID); m.Steps[len(m.Steps)-1].Status != journeys.StatusFailed {
		t.Errorf("the maybe-reached action's approval step = %s, want failed", m.Steps[len(m.Steps)-1].Status)
	}
	if m := r.action(maybe.Action.ID); m.Status != approvals.StatusFailed {
		t.Errorf("the maybe-reached action = %s, want still failed (reconciliation decides)", m.Status)
	}
}
