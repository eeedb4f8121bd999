package approvals

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// Two approvers decide the same actions through two handles on one
// database, as on two replicas: each action gets exactly one outcome, its
// approval runs once, and the audit chain stays whole. On PostgreSQL
// (WARDEN_TEST_POSTGRES) the handles are separate connection pools.
func TestTwoReplicasDecidingOneActionRecordOneOutcome(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other, err := store.OpenURL(ctx, f.url, store.Options{DataDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	storetest.NoConflicts(t, other)
	t.Cleanup(func() { other.Close() })
	const n = 40
	var actions []Action
	for i := range n {
		actions = append(actions, f.newAction(t, i, 1))
	}
	var executed sync.Map
	onDecided := func(ctx context.Context, tx *store.Tx, a Action) error {
		if a.Status == StatusApproved {
			c, _ := executed.LoadOrStore(a.ID, new(atomic.Int32))
			c.(*atomic.Int32).Add(1)
		}
		return nil
	}
	var wins, losses atomic.Int32
	var wg sync.WaitGroup
	for _, a := range actions {
		for i, p := range []identity.Principal{alice, bob} {
			db := []*store.DB{f.db, other}[i]
			wg.Go(func() {
				_, err := Decide(ctx, db, Request{Principal: p, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, onDecided, time.Now())
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, ErrAlreadyDecided):
					losses.Add(1)
				default:
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if wins.Load() != n || losses.Load() != n {
		t.Fatalf("wins %d, losses %d; want %d and %d", wins.Load(), losses.Load(), n, n)
	}
	for _, a := range actions {
		ds, err := Decisions(ctx, other.Read(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := executed.Load(a.ID)
		if len(ds) != 1 || !ok || c.(*atomic.Int32).Load() != 1 {
			t.Fatalf("action %s: %d decisions recorded, approval ran %v; want one of each", a.ID, len(ds), c)
		}
	}
	head, err := audit.Verify(ctx, f.db.Read(), nil)
	if err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	var events int64
	if err := f.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if head.Seq != events {
		t.Fatalf("chain head at seq %d with %d events: seq has gaps", head.Seq, events)
	}
}

// The same decision sent six times at once (a double-clicking approver, a
// retrying client), through two handles on one database as on two
// replicas: one is recorded, the others are refused as already decided
// (or, on an action that needs a second approver, as already approved by
// this person), never a failure. Two different approvers racing on a
// two-approver action both count. On PostgreSQL the identical decisions
// once all reached the decisions insert (a unique violation, a 500), and
// the second of two approvers lost the compare-and-set.
func TestConcurrentDecisionsTakeTurns(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other, err := store.OpenURL(ctx, f.url, store.Options{DataDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	storetest.NoConflicts(t, other)
	t.Cleanup(func() { other.Close() })
	dbs := []*store.DB{f.db, other}
	var n atomic.Int32
	at := func(required int) Action { return f.newAction(t, int(n.Add(1))+500, required) }
	// decideAtOnce sends each principal's approval copies times, all at once.
	decideAtOnce := func(a Action, copies int, ps ...identity.Principal) []error {
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, copies*len(ps))
		for i := range errs {
			p := ps[i%len(ps)]
			wg.Go(func() {
				<-start
				_, errs[i] = Decide(ctx, dbs[i%2], Request{Principal: p, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, nil, time.Now())
			})
		}
		close(start)
		wg.Wait()
		return errs
	}
	count := func(errs []error, want error) (ok, refused int) {
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, want):
				refused++
			default:
				t.Errorf("decision failed: %v, want success or %v", err, want)
			}
		}
		return ok, refused
	}
	for round := range 5 {
		a := at(1)
		if ok, refused := count(decideAtOnce(a, 6, alice), ErrAlreadyDecided); ok != 1 || refused != 5 {
			t.Errorf("round %d, one approver: %d recorded, %d already decided; want 1 and 5", round, ok, refused)
		}
		if ds, _ := Decisions(ctx, f.db.Read(), a.ID); len(ds) != 1 {
			t.Errorf("round %d, one approver: %d decisions recorded, want 1", round, len(ds))
		}

		b := at(2)
		if ok, refused := count(decideAtOnce(b, 6, alice), ErrAlreadyApproved); ok != 1 || refused != 5 {
			t.Errorf("round %d, two approvers, alice six times: %d recorded, %d already approved; want 1 and 5", round, ok, refused)
		}
		if got, _ := Get(ctx, f.db.Read(), b.ID); got.Status != StatusPending || got.ApprovalsGiven != 1 {
			t.Errorf("round %d: after alice six times the action is %s with %d of 2, want pending with 1", round, got.Status, got.ApprovalsGiven)
		}

		c := at(2)
		if ok, _ := count(decideAtOnce(c, 1, alice, bob), nil); ok != 2 {
			t.Errorf("round %d, two approvers at once: %d recorded, want both", round, ok)
		}
		if got, _ := Get(ctx, f.db.Read(), c.ID); got.Status != StatusApproved || got.ApprovalsGiven != 2 {
			t.Errorf("round %d: after alice and bob at once the action is %s with %d of 2, want approved with 2", round, got.Status, got.ApprovalsGiven)
		}
	}
	if _, err := audit.Verify(ctx, f.db.Read(), nil); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
}
