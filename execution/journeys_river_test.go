package execution

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
)

// On PostgreSQL the approval enqueues the execution on River, in the
// decision's transaction, and River's workers (two queues, as two
// replicas) execute the approved refund exactly once.
func TestApprovedRefundExecutesOnceOnRiver(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("River runs on PostgreSQL: set " + storetest.EnvPostgres)
	}
	r := newRig(t)
	var runs atomic.Int32
	for range 2 {
		q := jobs.New(r.db, slog.New(slog.NewTextHandler(io.Discard, nil)), 2)
		q.Register(JobExecuteAction, func(ctx context.Context, j jobs.Job) error {
			runs.Add(1)
			return r.ex.HandleExecute(ctx, j)
		})
		q.Register(JobCallback, r.ex.HandleCallback)
		q.Register(journeys.JobContinueJourney, r.svc.HandleContinue)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); q.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	out := r.approved(refundRequest)
	if !wait.For(15*time.Second, func() bool { return r.action(out.Action.ID).Status == approvals.StatusExecuted }) {
		t.Fatalf("action %s is %s, want executed by River", out.Action.ID, r.action(out.Action.ID).Status)
	}
	// Past a poll of both queues, the job has still run once.
	wait.Holds(t, 1500*time.Millisecond, "the execution job ran once", func() bool { return runs.Load() == 1 })
	if n := r.effects("issue_refund"); n != 1 {
		t.Errorf("%d refunds at the provider, want 1", n)
	}
}
