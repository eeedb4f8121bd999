package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestFailedJobsAreListedAndRetried (either engine): a job stopped by a
// permanent error and one out of attempts are listed with their last
// error and what they were about; an operator's retry runs the job again
// (now it succeeds), audits it, and takes it off the list. Retrying a job
// that has not failed changes nothing.
func TestFailedJobsAreListedAndRetried(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	var fixed atomic.Bool
	var runs atomic.Int32
	q := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), 1)
	q.backoff = func(int) time.Duration { return 0 }
	q.poll = 50 * time.Millisecond
	q.Register("flaky", func(_ context.Context, j Job) error {
		runs.Add(1)
		switch {
		case fixed.Load():
			return nil
		case strings.Contains(string(j.Payload), "act_perm"):
			return &Permanent{Err: errors.New("the provider refused the card")}
		default:
			return errors.New("the provider timed out")
		}
	})
	for _, id := range []string{"act_perm", "act_tired"} {
		if err := db.Transact(ctx, func(tx *store.Tx) error {
			return Enqueue(ctx, tx, "flaky", map[string]string{"action_id": id}, Options{UniqueKey: id, MaxAttempts: 2})
		}); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); q.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	var failed []Failed
	waitFor(t, "both jobs to fail for good", func() bool {
		var err error
		failed, _, err = ListFailed(ctx, db, 10)
		return err == nil && len(failed) == 2
	})
	byAction := map[string]Failed{}
	for _, f := range failed {
		byAction[f.ActionID] = f
	}
	if f := byAction["act_perm"]; !f.Permanent || f.Error != "the provider refused the card" || f.Attempts != 1 || f.Kind != "flaky" || f.At.IsZero() {
		t.Errorf("the permanently failed job is listed as %+v", f)
	}
	if f := byAction["act_tired"]; f.Permanent || f.Error != "the provider timed out" || f.Attempts != 2 || f.MaxAttempts != 2 {
		t.Errorf("the job out of attempts is listed as %+v", f)
	}

	fixed.Store(true)
	before := runs.Load()
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: "p-carol"}
	for _, f := range failed {
		if err := Retry(ctx, db, f.ID, audit.JobRetried(actor, f.ID)); err != nil {
			t.Fatalf("retry %d: %v", f.ID, err)
		}
	}
	waitFor(t, "the retried jobs to run and leave the list", func() bool {
		left, total, err := ListFailed(ctx, db, 10)
		return err == nil && len(left) == 0 && total == 0 && runs.Load() >= before+2
	})
	if err := Retry(ctx, db, failed[0].ID, audit.JobRetried(actor, failed[0].ID)); !errors.Is(err, ErrNotFailed) {
		t.Errorf("retrying a job that succeeded: %v, want ErrNotFailed", err)
	}
	if err := Retry(ctx, db, 999999, audit.JobRetried(actor, 999999)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("retrying an unknown job: %v, want ErrNotFound", err)
	}
	events, err := audit.List(ctx, db.Read(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	retried := 0
	for _, e := range events {
		if e.Verb == "job.retried" && e.Actor == actor && e.Details["kind"] == "flaky" {
			retried++
		}
	}
	if retried != 2 {
		t.Errorf("%d job.retried events by %s, want 2", retried, actor.ID)
	}
}
