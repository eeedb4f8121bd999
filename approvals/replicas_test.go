package approvals

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/store"
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
	t.Cleanup(func() { other.Close() })
	const n = 40
	var actions []Action
	for i := range n {
		actions = append(actions, f.newAction(t, i, 1))
	}
	var executed sync.Map
	onDecided := func(ctx context.Context, tx *sql.Tx, a Action) error {
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
