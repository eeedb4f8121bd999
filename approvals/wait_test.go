package approvals

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// countedReads is a Querier that counts the rows read through it and
// closes reached once the count gets to at, so that a test can act while
// Wait is known to be waiting.
type countedReads struct {
	store.Querier
	at      int
	reached chan struct{}

	mu sync.Mutex
	n  int
}

func countReads(q store.Querier, at int) *countedReads {
	return &countedReads{Querier: q, at: at, reached: make(chan struct{})}
}

func (c *countedReads) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	c.mu.Lock()
	c.n++
	if c.n == c.at {
		close(c.reached)
	}
	c.mu.Unlock()
	return c.Querier.QueryRowContext(ctx, query, args...)
}

func (c *countedReads) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

type waited struct {
	a   Action
	err error
}

// waitAsync runs Wait in a goroutine and hands its answer to the channel.
func waitAsync(ctx context.Context, q store.Querier, id string, until time.Time) <-chan waited {
	out := make(chan waited, 1)
	go func() {
		a, err := Wait(ctx, q, id, until)
		out <- waited{a, err}
	}()
	return out
}

// within receives Wait's answer, failing the test when none comes in d.
func within(t *testing.T, ch <-chan waited, d time.Duration) waited {
	t.Helper()
	select {
	case w := <-ch:
		return w
	case <-time.After(d):
		t.Fatalf("Wait did not answer within %v", d)
		return waited{}
	}
}

func reached(t *testing.T, c *countedReads) {
	t.Helper()
	select {
	case <-c.reached:
	case <-time.After(10 * time.Second):
		t.Fatalf("Wait read the action %d times in 10 s, want %d", c.reads(), c.at)
	}
}

func TestWaitReturnsAtOnceWhenDecided(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.newAction(t, 1, 1)
	if _, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	q := countReads(f.db.Read(), 0)
	got, err := Wait(ctx, q, a.ID, time.Now().Add(time.Minute))
	if err != nil || got.ID != a.ID || got.Status != StatusApproved {
		t.Fatalf("Wait = %s %s, %v; want %s approved", got.ID, got.Status, err, a.ID)
	}
	if n := q.reads(); n != 1 {
		t.Errorf("Wait read a decided action %d times, want 1", n)
	}
}

func TestWaitReturnsWhenDecidedMeanwhile(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.newAction(t, 1, 1)
	q := countReads(f.db.Read(), 2) // read pending, then polled once
	until := time.Now().Add(time.Minute)
	ch := waitAsync(ctx, q, a.ID, until)
	reached(t, q)
	if _, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: a.ID, Decision: Reject, Comment: "no", Digest: a.PayloadDigest}, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	w := within(t, ch, 10*time.Second)
	if w.err != nil || w.a.ID != a.ID || w.a.Status != StatusRejected {
		t.Fatalf("Wait = %s %s, %v; want %s rejected", w.a.ID, w.a.Status, w.err, a.ID)
	}
	if !time.Now().Before(until) {
		t.Errorf("Wait answered at the deadline, not when the action was decided")
	}
}

func TestWaitReturnsPendingAtDeadline(t *testing.T) {
	f := setup(t)
	a := f.newAction(t, 1, 1)
	until := time.Now().Add(300 * time.Millisecond)
	got, err := Wait(context.Background(), f.db.Read(), a.ID, until)
	if err != nil || got.ID != a.ID || got.Status != StatusPending {
		t.Fatalf("Wait = %s %s, %v; want %s pending", got.ID, got.Status, err, a.ID)
	}
	if now := time.Now(); now.Before(until) || now.After(until.Add(5*time.Second)) {
		t.Errorf("Wait answered %v after the deadline, want at it", now.Sub(until))
	}
	// A deadline already past: one read, the action as it is.
	q := countReads(f.db.Read(), 0)
	if got, err := Wait(context.Background(), q, a.ID, time.Now().Add(-time.Second)); err != nil || got.Status != StatusPending || q.reads() != 1 {
		t.Errorf("Wait with a past deadline = %s, %v after %d reads; want pending after 1", got.Status, err, q.reads())
	}
}

func TestWaitStopsWhenCancelled(t *testing.T) {
	f := setup(t)
	a := f.newAction(t, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := countReads(f.db.Read(), 1)
	ch := waitAsync(ctx, q, a.ID, time.Now().Add(time.Minute))
	reached(t, q)
	cancel()
	if w := within(t, ch, 10*time.Second); !errors.Is(w.err, context.Canceled) || w.a.ID != "" {
		t.Errorf("Wait after cancel = %q, %v; want no action and context.Canceled", w.a.ID, w.err)
	}
	if _, err := Wait(ctx, f.db.Read(), a.ID, time.Now().Add(time.Minute)); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestWaitUnknownAction(t *testing.T) {
	f := setup(t)
	if _, err := Wait(context.Background(), f.db.Read(), "act_missing", time.Now().Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Wait for an unknown action = %v, want store.ErrNotFound", err)
	}
}
