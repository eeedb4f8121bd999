package execution

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/jobs"
)

// TestExpiryJobEndsTheWaitingJourneyAtItsTime: a pending action's expiry
// job, run before the expiry (a replica whose clock is behind), leaves
// it pending and retries; run after, it expires the action and ends the
// journey that waited; run again, it changes nothing.
func TestExpiryJobEndsTheWaitingJourneyAtItsTime(t *testing.T) {
	r := newRig(t)
	out := r.pending(refundRequest)
	job := jobs.Job{Kind: approvals.JobExpire, Payload: json.RawMessage(`{"action_id":"` + out.Action.ID + `"}`), Attempts: 1, MaxAttempts: 25}
	if err := r.ex.HandleExpire(r.ctx, job); !errors.Is(err, approvals.ErrNotDue) {
		t.Fatalf("expiry job before the expiry: %v; want ErrNotDue (retried later)", err)
	}
	if a := r.action(out.Action.ID); a.Status != approvals.StatusPending {
		t.Fatalf("action is %s before its expiry, want pending", a.Status)
	}
	r.advance(r.action(out.Action.ID).ExpiresAt.Sub(r.clock()) + time.Second)
	for range 2 { // a job can run twice
		if err := r.ex.HandleExpire(r.ctx, job); err != nil {
			t.Fatalf("expiry job after the expiry: %v", err)
		}
	}
	if a := r.action(out.Action.ID); a.Status != approvals.StatusExpired {
		t.Fatalf("action is %s after its expiry job, want expired", a.Status)
	}
	if j := r.journey(out.Journey.ID); j.Status != approvals.StatusExpired || j.FinishedAt == nil {
		t.Fatalf("journey is %s (finished %v), want expired and finished", j.Status, j.FinishedAt)
	}
	evs, err := audit.List(r.ctx, r.db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, e := range evs {
		if e.Verb == "action.expired" && e.Subject.ID == out.Action.ID {
			expired++
		}
	}
	if expired != 1 {
		t.Fatalf("%d action.expired events, want 1", expired)
	}
}
