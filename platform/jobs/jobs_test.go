package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
)

func setup(t *testing.T) (*store.DB, *Queue) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	q := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), 1)
	q.backoff = func(int) time.Duration { return 0 }
	return db, q
}

func enqueue(t *testing.T, db *store.DB, kind string, o Options) {
	t.Helper()
	if err := db.Transact(context.Background(), func(tx *store.Tx) error {
		return Enqueue(context.Background(), tx, kind, map[string]string{"k": "v"}, o)
	}); err != nil {
		t.Fatal(err)
	}
}

func state(t *testing.T, db *store.DB) (string, int) {
	t.Helper()
	var s string
	var a int
	if err := db.Read().QueryRow(`SELECT state, attempts FROM jobs ORDER BY id DESC LIMIT 1`).Scan(&s, &a); err != nil {
		t.Fatal(err)
	}
	return s, a
}

func TestEnqueueIsPartOfTheTransaction(t *testing.T) {
	db, _ := setup(t)
	boom := errors.New("boom")
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		if err := Enqueue(context.Background(), tx, "x", nil, Options{}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	var n int
	db.Read().QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n)
	if n != 0 {
		t.Fatalf("a rolled-back transaction left %d jobs", n)
	}
	enqueue(t, db, "x", Options{UniqueKey: "once"})
	enqueue(t, db, "x", Options{UniqueKey: "once"})
	db.Read().QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n)
	if n != 1 {
		t.Fatalf("unique key: %d jobs, want 1", n)
	}
}

func TestRunRetryDiscard(t *testing.T) {
	db, q := setup(t)
	var calls atomic.Int32
	q.Register("flaky", func(ctx context.Context, j Job) error {
		if calls.Add(1) < 3 {
			return errors.New("try again")
		}
		return nil
	})
	enqueue(t, db, "flaky", Options{MaxAttempts: 5})
	for range 3 {
		if ran, err := q.RunOne(context.Background()); !ran || err != nil {
			t.Fatalf("RunOne = %v, %v", ran, err)
		}
	}
	if s, a := state(t, db); s != "done" || a != 3 {
		t.Fatalf("flaky job = %s after %d attempts, want done after 3", s, a)
	}
	if ran, _ := q.RunOne(context.Background()); ran {
		t.Fatal("a done job ran again")
	}

	q.Register("doomed", func(ctx context.Context, j Job) error { return errors.New("never") })
	enqueue(t, db, "doomed", Options{MaxAttempts: 2})
	q.RunOne(context.Background())
	q.RunOne(context.Background())
	if s, a := state(t, db); s != "discarded" || a != 2 {
		t.Fatalf("doomed job = %s after %d, want discarded after 2", s, a)
	}

	q.Register("bad", func(ctx context.Context, j Job) error { return &Permanent{Err: errors.New("no")} })
	enqueue(t, db, "bad", Options{MaxAttempts: 10})
	q.RunOne(context.Background())
	if s, a := state(t, db); s != "discarded" || a != 1 {
		t.Fatalf("permanent failure = %s after %d, want discarded after 1", s, a)
	}

	q.Register("panics", func(ctx context.Context, j Job) error { panic("kaboom") })
	enqueue(t, db, "panics", Options{MaxAttempts: 3})
	q.RunOne(context.Background())
	if s, _ := state(t, db); s != "available" {
		t.Fatalf("panicking job = %s, want available for retry", s)
	}
}

func TestBackoffDelaysRetries(t *testing.T) {
	db, q := setup(t)
	q.backoff = Backoff
	q.Register("x", func(ctx context.Context, j Job) error { return errors.New("later") })
	enqueue(t, db, "x", Options{})
	q.RunOne(context.Background())
	if ran, _ := q.RunOne(context.Background()); ran {
		t.Fatal("a failed job ran again before its backoff")
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if d := Backoff(i + 1); d < want*3/4 || d > want*5/4 {
			t.Errorf("Backoff(%d) = %v, want %v ± 25%%", i+1, d, want)
		}
	}
	if d := Backoff(40); d > 10*time.Minute*5/4 {
		t.Errorf("Backoff(40) = %v, want capped at 10m", d)
	}
}

func TestRescueOrphans(t *testing.T) {
	db, q := setup(t)
	enqueue(t, db, "x", Options{})
	// A process claimed the job and died.
	if _, ok, err := q.claim(context.Background(), ""); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var ran atomic.Int32
	q2 := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), 1)
	q2.Register("x", func(ctx context.Context, j Job) error { ran.Add(1); return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q2.Run(ctx); close(done) }()
	wait.For(10*time.Second, func() bool { return ran.Load() > 0 })
	cancel()
	<-done
	if ran.Load() != 1 {
		t.Fatalf("orphaned job ran %d times after restart, want 1", ran.Load())
	}
	if s, a := state(t, db); s != "done" || a != 2 {
		t.Fatalf("orphan = %s after %d attempts, want done after 2", s, a)
	}
}
