package jobs

// On PostgreSQL the queue is River (github.com/riverqueue/river). Jobs
// are inserted with River's database/sql driver on the caller's own
// *sql.Tx, the transaction of the decision that needs them, so both
// commit or neither does; they are worked by a River client on a pgx pool
// of its own, opened from the same connection string. River's schema is
// migrated with Warden's (store/river.go). What the outbox does by hand,
// River does: it claims with FOR UPDATE SKIP LOCKED across replicas,
// retries with this package's Backoff, rescues jobs whose worker died
// (after RescueAfter), and deduplicates by UniqueKey.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/wardenhq/warden/platform/store"
)

const (
	// JobTimeout cancels a River job's context after this long, unless
	// the job says otherwise (Options.Timeout: an approved action whose
	// tool may take longer).
	JobTimeout = time.Minute
	// RescueAfter makes a job left running (its replica died) available
	// again: River's rescuer, every 30 s on the elected leader, takes a
	// job running for longer than RescueAfter and its own timeout. A job
	// a dead replica held thus runs again about 75 to 110 s after it
	// started (docs/deploy.md). It exceeds JobTimeout by the time a
	// handler takes to record its end after its context ended.
	RescueAfter = JobTimeout + 15*time.Second
	// PeriodicJobTimeout bounds a periodic run (retention, a reconcile of
	// many records): one a dead replica held is not run again, the next
	// period's is.
	PeriodicJobTimeout = 5 * time.Minute
)

// riverArgs is every job's River args: the kind is the River kind, Key
// the outbox's UniqueKey (the only field River's uniqueness compares) and
// Payload what the handler reads.
type riverArgs struct {
	kind    string
	Key     string          `json:"key,omitempty" river:"unique"`
	Payload json.RawMessage `json:"payload"`
	// TimeoutMS is the job's own timeout (Options.Timeout); 0 is
	// JobTimeout. The rescuer reads it too.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

func (a riverArgs) Kind() string { return a.kind }

// uniqueStates are every state: as in the outbox, a key enqueues once for
// as long as its job is kept (River deletes completed jobs after a day,
// cancelled and discarded ones after a week).
var uniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
	rivertype.JobStateDiscarded, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// inserter is an insert-only River client: it has no pool, only the
// caller's transactions.
//
// Each insert notifies the workers' clients (LISTEN/NOTIFY, in the
// inserting transaction, so it arrives at its commit): River limits these
// notifications to one per queue per FetchCooldown, by default 100 ms, and
// a job inserted within that of the last one waited for the workers' next
// poll, up to a second. Its minimum, 1 ms, makes every insert but those of
// one burst wake them (BenchmarkDeliveryLatency in notify).
var inserter = sync.OnceValues(func() (*river.Client[*sql.Tx], error) {
	return river.NewClient(riverdatabasesql.New(nil), &river.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		FetchCooldown: river.FetchCooldownMin})
})

// enqueueRiver inserts a job into River inside tx.
func enqueueRiver(ctx context.Context, tx *store.Tx, kind string, raw json.RawMessage, o Options) error {
	c, err := inserter()
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	opts := &river.InsertOpts{MaxAttempts: o.MaxAttempts, ScheduledAt: o.RunAt, Queue: o.Queue}
	if o.UniqueKey != "" {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: uniqueStates}
	}
	if _, err := c.InsertTx(ctx, tx.Tx, riverArgs{kind: kind, Key: o.UniqueKey, Payload: raw, TimeoutMS: o.Timeout.Milliseconds()}, opts); err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	return nil
}

// enqueueRiverMany inserts jobs into River inside tx in one batch.
func enqueueRiverMany(ctx context.Context, tx *store.Tx, items []Item) error {
	c, err := inserter()
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	params := make([]river.InsertManyParams, 0, len(items))
	for _, it := range items {
		raw, err := json.Marshal(it.Payload)
		if err != nil {
			return fmt.Errorf("enqueue %s: %w", it.Kind, err)
		}
		o := it.Options
		if o.MaxAttempts <= 0 {
			o.MaxAttempts = 25
		}
		if o.Queue == "" {
			o.Queue = QueueDefault
		}
		opts := &river.InsertOpts{MaxAttempts: o.MaxAttempts, ScheduledAt: o.RunAt, Queue: o.Queue}
		if o.UniqueKey != "" {
			opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: uniqueStates}
		}
		params = append(params, river.InsertManyParams{Args: riverArgs{kind: it.Kind, Key: o.UniqueKey, Payload: raw, TimeoutMS: o.Timeout.Milliseconds()}, InsertOpts: opts})
	}
	if _, err := c.InsertManyTx(ctx, tx.Tx, params); err != nil {
		return fmt.Errorf("enqueue %d jobs: %w", len(items), err)
	}
	return nil
}

// riverWorker runs one kind's handler with the outbox's contract.
type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	kind string
	h    Handler
	log  *slog.Logger
}

// Timeout is the job's own timeout, when it has one (River's rescuer
// waits for it too before it runs a job left running again).
func (w *riverWorker) Timeout(rj *river.Job[riverArgs]) time.Duration {
	return time.Duration(rj.Args.TimeoutMS) * time.Millisecond
}

func (w *riverWorker) Work(ctx context.Context, rj *river.Job[riverArgs]) error {
	j := Job{ID: rj.ID, Kind: rj.Kind, Payload: rj.Args.Payload, Attempts: rj.Attempt, MaxAttempts: rj.MaxAttempts}
	err := safeRun(ctx, w.h, j)
	var perm *Permanent
	switch {
	case err == nil:
		return nil
	case errors.As(err, &perm):
		// Cancelled in River's terms: not retried, kept for a week.
		w.log.Error("job failed permanently", "job", j.ID, "kind", j.Kind, "attempts", j.Attempts, "err", err)
		return river.JobCancel(err)
	case j.Attempts >= j.MaxAttempts:
		w.log.Error("job discarded", "job", j.ID, "kind", j.Kind, "attempts", j.Attempts, "err", err)
	default:
		w.log.Warn("job failed; will retry", "job", j.ID, "kind", j.Kind, "attempt", j.Attempts, "err", err)
	}
	return err
}

// retryPolicy spaces River's retries as the outbox does.
type retryPolicy struct{ backoff func(int) time.Duration }

func (p retryPolicy) NextRetry(j *rivertype.JobRow) time.Time {
	return time.Now().Add(p.backoff(max(1, j.Attempt)))
}

// startRiver builds River's client with q's handlers and starts it; it
// returns the client and its pool, to stop and close.
func (q *Queue) startRiver(ctx context.Context) (*river.Client[pgx.Tx], *pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(q.db.PostgresDSN())
	if err != nil {
		return nil, nil, fmt.Errorf("river pool: %w", err)
	}
	// The workers, River's leader and producers, and its LISTEN connection.
	queues := map[string]river.QueueConfig{}
	conns := 4
	for _, l := range q.lanes {
		queues[l.name] = river.QueueConfig{MaxWorkers: l.workers, FetchCooldown: min(l.cooldown, q.poll)}
		conns += l.workers + 1
	}
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("river pool: %w", err)
	}
	workers := river.NewWorkers()
	for kind, h := range q.handlers {
		river.AddWorkerArgs(workers, riverArgs{kind: kind}, &riverWorker{kind: kind, h: h, log: q.log})
	}
	var periodic []*river.PeriodicJob
	for _, p := range q.periodic {
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(p.every),
			func() (river.JobArgs, *river.InsertOpts) {
				// Unique by period: a new leader enqueueing again within
				// the interval adds nothing.
				return riverArgs{kind: p.kind, Payload: json.RawMessage("{}"), TimeoutMS: PeriodicJobTimeout.Milliseconds()},
					&river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: p.every}}
			},
			&river.PeriodicJobOpts{ID: p.kind, RunOnStart: true}))
	}
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		PeriodicJobs:         periodic,
		Queues:               queues,
		Workers:              workers,
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: RescueAfter,
		RetryPolicy:          retryPolicy{backoff: q.backoff},
		FetchPollInterval:    q.poll,
		FetchCooldown:        min(q.poll, q.cooldown),
		Logger:               q.log.With("component", "river"),
	})
	if err == nil {
		// Its own context: cancelling Start's would cancel running jobs,
		// and shutdown drains them instead (Stop).
		err = c.Start(context.WithoutCancel(ctx))
	}
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("river client: %w", err)
	}
	return c, pool, nil
}

// runRiver works River's jobs until ctx ends, then lets the jobs in
// progress finish. If River cannot start (the database is down), it
// tries again every five poll intervals.
func (q *Queue) runRiver(ctx context.Context) {
	for {
		c, pool, err := q.startRiver(ctx)
		if err == nil {
			<-ctx.Done()
			if err := c.Stop(context.WithoutCancel(ctx)); err != nil {
				q.log.Error("stop river", "err", err)
			}
			pool.Close()
			return
		}
		q.log.Error("job queue", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * q.poll):
		}
	}
}

// countRiver is how many River jobs are due, running or waiting for a
// retry (not those scheduled for later).
func countRiver(ctx context.Context, q store.Querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE state IN ('available', 'pending', 'retryable', 'running')`).Scan(&n)
	return n, err
}
