package journeys

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/tools"
)

// Shutdown stops the journeys running in this process — one waiting on a
// provider that answers only when its context ends — and they end
// cancelled, saying Warden is shutting down, with their reservation
// released; a journey of this replica's that nobody runs (its admission's
// commit was reported lost) ends interrupted, its reservation released
// too. A journey of another replica is left alone.
func TestShutdownEndsTheJourneysOfThisReplica(t *testing.T) {
	r := newRig(t)
	r.svc.o.ReplicaID = "rep_here"
	before := r.budget()
	started := make(chan struct{})
	r.hooks.set(func(ctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		close(started)
		<-ctx.Done()
		return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "stopped", Err: ctx.Err()}
	})
	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1)
	go func() { out, err := r.run("Where is my order ORD-1003?"); done <- result{out, err} }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the journey never reached its provider")
	}
	// Left by a lost commit: this replica's, running, run by nobody; and a
	// live replica's, which is not this one's to end.
	mine := r.leftRunning("jrn_lost", "rep_here", 1000)
	theirs := r.leftRunning("jrn_theirs", "rep_other", 2000)

	n, err := r.svc.Shutdown(r.ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	res := <-done
	p := problemOf(t, "the journey running at shutdown", res.err)
	if p.Code != CodeCancelled || !strings.Contains(p.Message, "shutting down") {
		t.Errorf("journey running at shutdown: %s %q, want cancelled, saying Warden is shutting down", p.Code, p.Message)
	}
	var je *JourneyError
	if !errors.As(res.err, &je) {
		t.Fatalf("err = %v, want a JourneyError", res.err)
	}
	if j := r.journey(je.Journey.ID); j.Status != StatusCancelled {
		t.Errorf("journey running at shutdown is stored %s, want cancelled", j.Status)
	}
	if n != 1 {
		t.Errorf("Shutdown ended %d journeys nobody ran, want 1", n)
	}
	if j := r.journey(mine); j.Status != StatusFailed || j.ErrorCode != "interrupted" {
		t.Errorf("this replica's journey left running: %s (%s), want failed (interrupted)", j.Status, j.ErrorCode)
	}
	if j := r.journey(theirs); j.Status != StatusRunning {
		t.Errorf("another replica's journey: %s, want still running", j.Status)
	}
	// Only the other replica's reservation is left.
	if got, want := r.budget().ReservedMicros, before.ReservedMicros+2000; got != want {
		t.Errorf("reserved after Shutdown: %d, want %d (only the other replica's journey's)", got, want)
	}
}

// leftRunning records a running journey of replica with reserved
// micro-units reserved on the rig tenant's budget, as an admission does.
func (r *rig) leftRunning(id, replica string, reserved int64) string {
	r.t.Helper()
	j := &Journey{ID: id, TenantID: r.tenant.ID, KeyID: r.caller.Key.ID, Status: StatusRunning, Input: "left running",
		ReservedMicros: reserved, CreatedAt: r.clock()}
	err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(r.ctx, `UPDATE budgets SET reserved_micros = reserved_micros + ? WHERE tenant_id = ?`, reserved, r.tenant.ID); err != nil {
			return err
		}
		return insertJourney(r.ctx, tx, j, replica)
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}
