package journeys

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools"
)

// TestRetriedFinishReturnsOneApprovalStep (PostgreSQL): the transaction
// that ends a journey at its approval step is aborted as a deadlock — a
// transaction of the test takes the locks against Warden's order: it
// holds the budget's row and then asks for the journey's, which the
// journey's end holds (it locks the journey's row first) — and
// store.Transact runs it again. The journey comes back with one approval step, as stored,
// and one pending action.
func TestRetriedFinishReturnsOneApprovalStep(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("SQLite has one writer at a time and never aborts a transaction as a deadlock: set " + storetest.EnvPostgres)
	}
	r := newRig(t)
	ctx := r.ctx
	deadlocks := func() int64 {
		var n int64
		r.db.Read().QueryRowContext(ctx, `SELECT pg_stat_clear_snapshot()`).Scan(new(any))
		if err := r.db.Read().QueryRowContext(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := deadlocks()
	blocker := make(chan error, 1)
	r.hooks.set(func(hctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		if call.Tool != "lookup_order" {
			return next()
		}
		tx, err := r.db.Read().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The journey's end is the one to detect the deadlock, and so its
		// victim: it waits first, and this transaction waits longer.
		if _, err := tx.ExecContext(ctx, `SET LOCAL deadlock_timeout = '30s'`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE budgets SET reserved_micros = reserved_micros WHERE tenant_id = $1`, r.tenant.ID); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer tx.Rollback()
			// Once the journey's end waits for the budget's row, holding
			// the journey's, ask for the journey's row.
			if !wait.For(20*time.Second, func() bool {
				var waiting int
				r.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
					WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE budgets SET reserved_micros = CASE%'`).Scan(&waiting)
				return waiting > 0
			}) {
				blocker <- errors.New("the journey's end never waited for the budget's row")
				return
			}
			if _, err := tx.ExecContext(ctx, `UPDATE journeys SET status = status WHERE status = 'running'`); err != nil {
				blocker <- err
				return
			}
			blocker <- tx.Commit()
		}()
		return next()
	})
	out, err := r.run(refundRequest)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-blocker; err != nil {
		t.Fatalf("the test's transaction: %v", err)
	}
	if got := deadlocksAfter(t, deadlocks, before); got < 1 {
		t.Fatalf("no deadlock was detected: the journey's end did not run twice, and the test proves nothing")
	}
	approvalSteps := func(steps []Step) int {
		n := 0
		for _, st := range steps {
			if st.Kind == "approval" {
				n++
			}
		}
		return n
	}
	if n := approvalSteps(out.Journey.Steps); n != 1 {
		t.Errorf("the journey came back with %d approval steps after its end ran again, want 1: %v", n, stepsOf(out.Journey))
	}
	if n := approvalSteps(r.journey(out.Journey.ID).Steps); n != 1 {
		t.Errorf("%d approval steps stored, want 1", n)
	}
	if out.Action == nil || r.action(out.Action.ID).Status != "pending" {
		t.Errorf("action = %+v, want the one pending action", out.Action)
	}
	var actions int
	r.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM actions WHERE journey_id = $1`, out.Journey.ID).Scan(&actions)
	if actions != 1 {
		t.Errorf("%d actions for the journey, want 1", actions)
	}
}

// deadlocksAfter waits for the server's statistics to count the deadlocks
// since before. A backend flushes its statistics when it goes idle, but
// at most once a second: one that flushed less than a second ago sets a
// timer of PGSTAT_IDLE_INTERVAL (10 s) instead, so the count can take
// more than 10 s to show.
func deadlocksAfter(t *testing.T, count func() int64, before int64) int64 {
	t.Helper()
	var n int64
	wait.ForEvery(30*time.Second, 100*time.Millisecond, func() bool { n = count() - before; return n > 0 })
	return n
}
