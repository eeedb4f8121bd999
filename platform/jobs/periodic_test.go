package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestPeriodicRunsAtStartAndEveryInterval (either engine): a periodic job
// runs when the queue starts and again after each interval, and a run
// that fails does not stop the next one.
func TestPeriodicRunsAtStartAndEveryInterval(t *testing.T) {
	db := storetest.Open(t)
	var n atomic.Int32
	q := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), 1)
	q.poll = 50 * time.Millisecond
	q.Periodic("tick", time.Second, func(context.Context, Job) error {
		if n.Add(1) == 1 {
			return errors.New("the first run fails")
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); q.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the run at start", func() bool { return n.Load() >= 1 })
	waitFor(t, "a second run, after the first failed", func() bool { return n.Load() >= 2 })
}

// TestPeriodicRunsOnceAcrossReplicas: two queues on one PostgreSQL
// database (two replicas) each declare the same periodic job; River's
// leader enqueues it, so it runs about once per interval in all, not once
// per replica.
func TestPeriodicRunsOnceAcrossReplicas(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("replicas share a database on PostgreSQL only: set " + storetest.EnvPostgres)
	}
	url := storetest.URL(t)
	const interval = time.Second
	var n atomic.Int32
	for range 2 {
		replica, err := store.OpenURL(context.Background(), url, store.Options{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { replica.Close() })
		riverQueue(t, replica, func(q *Queue) {
			q.Periodic("tick", interval, func(context.Context, Job) error { n.Add(1); return nil })
		})
	}
	// A leader is elected first, which on a busy machine takes seconds of
	// its own: the runs counted start at the first one. Once per interval,
	// five more runs take at least four intervals (a leader change may add
	// one run); a run per replica would make them in half that.
	waitFor(t, "the first run", func() bool { return n.Load() >= 1 })
	first, start := n.Load(), time.Now()
	const more = 5
	waitForWithin(t, 30*time.Second, "five more runs", func() bool { return n.Load() >= first+more })
	elapsed := time.Since(start)
	t.Logf("%d more runs in %s after the first", more, elapsed.Round(time.Millisecond))
	if elapsed < (more-1)*interval-interval/2 {
		t.Fatalf("%d runs in %s across two replicas; want about one per interval (%s)", more, elapsed.Round(time.Millisecond), interval)
	}
}

// TestCountPendingLeavesOutJobsScheduledForLater (either engine): an
// action's expiry job waits for a day; "jobs waiting to run" does not
// count it, a job due now does.
func TestCountPendingLeavesOutJobsScheduledForLater(t *testing.T) {
	db := storetest.Open(t)
	put(t, db, "later", "later", Options{RunAt: time.Now().Add(24 * time.Hour)})
	if n, err := CountPending(context.Background(), db); err != nil || n != 0 {
		t.Fatalf("CountPending = %d, %v; want 0 (the job is due tomorrow)", n, err)
	}
	put(t, db, "now", "now", Options{})
	if n, err := CountPending(context.Background(), db); err != nil || n != 1 {
		t.Fatalf("CountPending = %d, %v; want 1", n, err)
	}
}
