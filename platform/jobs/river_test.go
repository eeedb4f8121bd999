package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
)

// On PostgreSQL jobs run on River; these tests hold it to the outbox's
// contract. They skip without WARDEN_TEST_POSTGRES.

func riverSetup(t *testing.T) *store.DB {
	t.Helper()
	if !storetest.Postgres() {
		t.Skip("River runs on PostgreSQL: set " + storetest.EnvPostgres)
	}
	return storetest.Open(t)
}

// riverQueue returns a queue over db with short waits, its handlers
// registered by register, running until the test ends.
func riverQueue(t *testing.T, db *store.DB, register func(q *Queue)) {
	t.Helper()
	q := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), 2)
	q.backoff = func(int) time.Duration { return 0 }
	q.poll = 50 * time.Millisecond
	register(q)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); q.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// runs counts the runs of each payload's "k".
type runs struct {
	sync.Mutex
	n map[string]int
}

func (r *runs) handler(fail func(k string, attempt int) error) Handler {
	return func(ctx context.Context, j Job) error {
		var p map[string]string
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return &Permanent{Err: err}
		}
		r.Lock()
		if r.n == nil {
			r.n = map[string]int{}
		}
		r.n[p["k"]]++
		r.Unlock()
		if fail != nil {
			return fail(p["k"], j.Attempts)
		}
		return nil
	}
}

func (r *runs) of(k string) int { r.Lock(); defer r.Unlock(); return r.n[k] }

// riverStates maps each job's payload "k" to its River state and attempt.
func riverStates(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	rows, err := db.Read().Query(`SELECT args->'payload'->>'k', state::text || '/' || attempt FROM river_job`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, s string
		if err := rows.Scan(&k, &s); err != nil {
			t.Fatal(err)
		}
		out[k] = s
	}
	return out
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 10*time.Second, what, cond)
}

// waitForWithin is waitFor with a deadline of its own.
func waitForWithin(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, within, what, cond)
}

func put(t *testing.T, db *store.DB, kind, k string, o Options) {
	t.Helper()
	if err := db.Transact(context.Background(), func(tx *store.Tx) error {
		return Enqueue(context.Background(), tx, kind, map[string]string{"k": k}, o)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestRiverRunsCommittedJobsOnceAndRolledBackNever(t *testing.T) {
	db := riverSetup(t)
	boom := errors.New("boom")
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		if err := Enqueue(context.Background(), tx, "test_job", map[string]string{"k": "rolled-back"}, Options{}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	put(t, db, "test_job", "committed", Options{})
	put(t, db, "test_job", "once", Options{UniqueKey: "once"})
	put(t, db, "test_job", "once-again", Options{UniqueKey: "once"}) // the same key: not added
	if n, err := CountPending(context.Background(), db); err != nil || n != 2 {
		t.Fatalf("CountPending = %d, %v; want 2", n, err)
	}
	var r runs
	riverQueue(t, db, func(q *Queue) { q.Register("test_job", r.handler(nil)) })
	waitFor(t, "the committed jobs", func() bool {
		s := riverStates(t, db)
		return s["committed"] == "completed/1" && s["once"] == "completed/1"
	})
	// Over several polls, nothing runs again.
	wait.Holds(t, 300*time.Millisecond, "committed and once ran once each, nothing else", func() bool {
		return r.of("committed") == 1 && r.of("once") == 1 && r.of("rolled-back") == 0 && r.of("once-again") == 0
	})
	if s := riverStates(t, db); len(s) != 2 {
		t.Fatalf("river_job holds %v; want the two committed jobs", s)
	}
	if n, err := CountPending(context.Background(), db); err != nil || n != 0 {
		t.Fatalf("CountPending = %d, %v; want 0", n, err)
	}
}

func TestRiverRetryDiscardCancel(t *testing.T) {
	db := riverSetup(t)
	var r runs
	riverQueue(t, db, func(q *Queue) {
		q.Register("test_job", r.handler(func(k string, attempt int) error {
			switch {
			case k == "flaky" && attempt < 3:
				return errors.New("try again")
			case k == "broken":
				return errors.New("always")
			case k == "permanent":
				return &Permanent{Err: errors.New("cannot")}
			}
			return nil
		}))
	})
	put(t, db, "test_job", "flaky", Options{MaxAttempts: 5})
	put(t, db, "test_job", "broken", Options{MaxAttempts: 2})
	put(t, db, "test_job", "permanent", Options{MaxAttempts: 5})
	put(t, db, "unknown-kind", "orphan", Options{})
	waitFor(t, "every job to finish", func() bool {
		s := riverStates(t, db)
		return s["flaky"] == "completed/3" && s["broken"] == "discarded/2" && s["permanent"] == "cancelled/1"
	})
	// A kind no handler knows waits for a replica that knows it (a
	// rolling upgrade), where the outbox discarded it.
	if s := riverStates(t, db)["orphan"]; !strings.HasPrefix(s, "retryable/") && !strings.HasPrefix(s, "available/") && !strings.HasPrefix(s, "running/") {
		t.Errorf("the job of an unknown kind is %s, want waiting to be retried", s)
	}
	if r.of("flaky") != 3 || r.of("broken") != 2 || r.of("permanent") != 1 {
		t.Fatalf("runs = %v; want flaky 3, broken 2, permanent 1", r.n)
	}
	var msg string
	if err := db.Read().QueryRow(`SELECT errors[array_length(errors, 1)]->>'error' FROM river_job WHERE args->'payload'->>'k' = 'broken'`).Scan(&msg); err != nil || msg != "always" {
		t.Fatalf("the discarded job's last error = %q, %v; want always", msg, err)
	}
}

// Two queues on one database, as two replicas: every job runs once.
func TestRiverTwoReplicasRunEachJobOnce(t *testing.T) {
	db := riverSetup(t)
	var r runs
	slow := func(string, int) error { time.Sleep(5 * time.Millisecond); return nil }
	riverQueue(t, db, func(q *Queue) { q.Register("test_job", r.handler(slow)) })
	riverQueue(t, db, func(q *Queue) { q.Register("test_job", r.handler(slow)) })
	const n = 60
	keys := make([]string, n)
	for i := range n {
		keys[i] = "job-" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		put(t, db, "test_job", keys[i], Options{})
	}
	waitFor(t, "every job", func() bool {
		done := 0
		for _, s := range riverStates(t, db) {
			if s == "completed/1" {
				done++
			}
		}
		return done == n
	})
	for _, k := range keys {
		if r.of(k) != 1 {
			t.Fatalf("%s ran %d times, want once", k, r.of(k))
		}
	}
}

// A job runs under its own timeout when it has one (an execution whose
// tool may take longer than JobTimeout), under JobTimeout otherwise; River's
// rescuer waits as long before it runs a dead replica's job again.
func TestRiverJobTimeouts(t *testing.T) {
	db := riverSetup(t)
	deadlines := make(chan time.Duration, 2)
	riverQueue(t, db, func(q *Queue) {
		q.Register("timed", func(ctx context.Context, j Job) error {
			d, ok := ctx.Deadline()
			if !ok {
				deadlines <- 0
				return nil
			}
			deadlines <- time.Until(d)
			return nil
		})
	})
	ctx := context.Background()
	for _, o := range []Options{{UniqueKey: "default"}, {UniqueKey: "own", Timeout: 3 * time.Minute}} {
		if err := db.Transact(ctx, func(tx *store.Tx) error { return Enqueue(ctx, tx, "timed", map[string]string{"k": o.UniqueKey}, o) }); err != nil {
			t.Fatal(err)
		}
		select {
		case left := <-deadlines:
			want := JobTimeout
			if o.Timeout > 0 {
				want = o.Timeout
			}
			if left <= want-10*time.Second || left > want {
				t.Errorf("job %s ran with %v left, want about %v", o.UniqueKey, left.Round(time.Second), want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("job %s never ran", o.UniqueKey)
		}
	}
	if RescueAfter < JobTimeout {
		t.Errorf("RescueAfter %v is shorter than JobTimeout %v: River refuses it", RescueAfter, JobTimeout)
	}
}
