// Package jobs is Warden's durable job queue. A job is enqueued inside the
// same transaction as the decision that needs it, so both exist or neither
// does; it runs at least once, retried with jittered exponential backoff
// until it succeeds, fails permanently or runs out of attempts; a job
// whose worker died runs again. Callers see one API (Enqueue, Queue) and
// do not know which engine runs it:
//
//   - On SQLite, a transactional outbox in the jobs table: workers claim
//     jobs with a lease, and a job whose worker died is rescued when its
//     lease runs out (or at start-up). River's SQLite driver was the first
//     choice; it is marked early testing and wants a one-connection pool,
//     which here is the request path's write connection.
//   - On PostgreSQL, River (river.go): inserted on the caller's *sql.Tx,
//     worked by River's client across every replica.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// Job is one unit of work.
type Job struct {
	ID          int64
	Kind        string
	Payload     json.RawMessage
	Attempts    int // including the current one
	MaxAttempts int
}

// Handler runs a job. A nil error completes it; an error retries it later
// (with backoff) until MaxAttempts; a *Permanent error discards it at once.
// Handlers must be idempotent: a job can run more than once.
type Handler func(ctx context.Context, j Job) error

// Permanent wraps an error that retrying cannot fix.
type Permanent struct{ Err error }

func (p *Permanent) Error() string { return "permanent: " + p.Err.Error() }
func (p *Permanent) Unwrap() error { return p.Err }

// Options of an enqueued job.
type Options struct {
	// UniqueKey makes enqueueing idempotent: a second job with the same key
	// is not added.
	UniqueKey   string
	MaxAttempts int
	RunAt       time.Time
	// Timeout, on PostgreSQL, is how long River lets the job run before
	// its context ends, and how long a job left running by a dead replica
	// waits before River runs it again; 0 is JobTimeout. The SQLite
	// outbox, one process's, does not end a job's context.
	Timeout time.Duration
	// Queue is the lane that works the job: QueueDefault unless set. A
	// lane has workers of its own (Queue.Lane), so its jobs neither wait
	// behind nor hold up another lane's.
	Queue string
}

// Lanes of the queue.
const (
	// QueueDefault works every job not given a lane: approved actions'
	// executions, escalations, reminders, periodic jobs.
	QueueDefault = "default"
	// QueueNotify works notification deliveries: a slow or dead receiver
	// takes only this lane's workers, never those executing actions.
	QueueNotify = "notify"
)

// Enqueue adds a job inside the caller's transaction (one that
// store.DB.Transact began): to the outbox on SQLite, to River on
// PostgreSQL.
func Enqueue(ctx context.Context, tx *store.Tx, kind string, payload any, o Options) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 25
	}
	if o.Queue == "" {
		o.Queue = QueueDefault
	}
	if tx.Dialect() == store.Postgres {
		return enqueueRiver(ctx, tx, kind, raw, o)
	}
	if o.RunAt.IsZero() {
		o.RunAt = time.Now()
	}
	var unique any
	if o.UniqueKey != "" {
		unique = o.UniqueKey
	}
	now := store.Now()
	_, err = tx.ExecContext(ctx, `INSERT INTO jobs (kind, payload, unique_key, state, max_attempts, run_at, created_at, updated_at, queue)
		VALUES (?, ?, ?, 'available', ?, ?, ?, ?, ?) ON CONFLICT (unique_key) DO NOTHING`,
		kind, string(raw), unique, o.MaxAttempts, store.FormatTime(o.RunAt), now, now, o.Queue)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	return nil
}

// Item is one job of EnqueueMany.
type Item struct {
	Kind    string
	Payload any
	Options Options
}

// EnqueueMany adds jobs inside the caller's transaction as Enqueue does,
// in one statement on PostgreSQL (River's InsertManyTx): for callers that
// queue several jobs on a latency-sensitive path.
func EnqueueMany(ctx context.Context, tx *store.Tx, items []Item) error {
	if len(items) == 0 {
		return nil
	}
	if tx.Dialect() != store.Postgres || len(items) == 1 {
		for _, it := range items {
			if err := Enqueue(ctx, tx, it.Kind, it.Payload, it.Options); err != nil {
				return err
			}
		}
		return nil
	}
	return enqueueRiverMany(ctx, tx, items)
}

// Queue runs jobs.
type Queue struct {
	db       *store.DB
	log      *slog.Logger
	lanes    []*lane
	lease    time.Duration
	poll     time.Duration
	cooldown time.Duration // River's FetchCooldown
	handlers map[string]Handler
	periodic []periodic
	now      func() time.Time
	backoff  func(attempt int) time.Duration
}

// lane is one queue's workers.
type lane struct {
	name     string
	workers  int
	cooldown time.Duration // River's FetchCooldown for this lane; 0: the queue's
	wake     chan struct{}
}

// New returns a queue over db with the given number of workers for the
// default lane.
func New(db *store.DB, log *slog.Logger, workers int) *Queue {
	q := &Queue{
		db: db, log: log, lease: 5 * time.Minute, poll: time.Second, cooldown: 100 * time.Millisecond,
		handlers: map[string]Handler{}, now: time.Now, backoff: Backoff,
	}
	q.Lane(QueueDefault, workers, 0)
	q.handlers[cleanupKind] = func(ctx context.Context, _ Job) error {
		_, err := Cleanup(ctx, q.db, q.now())
		return err
	}
	return q
}

// Backoff is the wait before retry number attempt: exponential from 1 s,
// capped at 10 minutes, with ±25% jitter.
func Backoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 10)
	d = min(d, 10*time.Minute)
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

// Lane gives the jobs enqueued with Options.Queue name workers of their
// own (at least one); jobs of a lane no queue runs wait. cooldown, on
// PostgreSQL, is the lane's River FetchCooldown (0: the queue's, see
// Polling): a busy lane fetches at most its free workers' worth of jobs
// per cooldown, so short jobs want a short one. Call before Run.
func (q *Queue) Lane(name string, workers int, cooldown time.Duration) {
	for _, l := range q.lanes {
		if l.name == name {
			l.workers, l.cooldown = max(1, workers), cooldown
			return
		}
	}
	q.lanes = append(q.lanes, &lane{name: name, workers: max(1, workers), cooldown: cooldown, wake: make(chan struct{}, 1)})
}

// Polling sets how often idle workers look for due jobs (poll, a second
// by default) and, on PostgreSQL, River's FetchCooldown: the least time
// between two fetches of a busy lane (100 ms by default), which bounds a
// lane's throughput to its workers' worth of jobs per cooldown. Call
// before Run.
func (q *Queue) Polling(poll, cooldown time.Duration) {
	if poll > 0 {
		q.poll = poll
	}
	if cooldown > 0 {
		q.cooldown = cooldown
	}
}

// Register sets the handler of a kind. Call before Run.
func (q *Queue) Register(kind string, h Handler) { q.handlers[kind] = h }

// periodic is a kind that runs every interval.
type periodic struct {
	kind  string
	every time.Duration
}

// Periodic makes h run when Run starts and then every interval, once per
// interval for the whole installation. On SQLite, one process, Run calls
// it on a timer. On PostgreSQL it is a River periodic job: River's
// elected leader enqueues it, so it runs once per interval across all
// replicas, on whichever replica's worker is free, and another replica
// takes over when the leader dies. A run that fails is logged and not
// retried: the next interval is the retry. Call before Run.
func (q *Queue) Periodic(kind string, every time.Duration, h Handler) {
	q.handlers[kind] = h
	q.periodic = append(q.periodic, periodic{kind: kind, every: every})
}

// Kept as River keeps them: done jobs a day, failed ones a week.
const (
	KeepDone   = 24 * time.Hour
	KeepFailed = 7 * 24 * time.Hour
	// cleanupKind is the outbox's own periodic job, deleting what is
	// kept no longer (River's cleaner does it on PostgreSQL).
	cleanupKind = "jobs_cleanup"
)

// Cleanup deletes the outbox's done jobs older than KeepDone and its
// failed ones older than KeepFailed, as of now; it returns how many.
func Cleanup(ctx context.Context, db *store.DB, now time.Time) (int64, error) {
	var n int64
	err := db.Transact(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE (state = 'done' AND updated_at < ?) OR (state = 'discarded' AND updated_at < ?)`,
			store.FormatTime(now.Add(-KeepDone)), store.FormatTime(now.Add(-KeepFailed)))
		if err != nil {
			return fmt.Errorf("clean up jobs: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// runPeriodic calls p's handler now and then every interval until ctx
// ends (the outbox's way: on SQLite there is one process).
func (q *Queue) runPeriodic(ctx context.Context, p periodic) {
	for {
		if err := safeRun(ctx, q.handlers[p.kind], Job{Kind: p.kind, Payload: json.RawMessage("{}"), Attempts: 1, MaxAttempts: 1}); err != nil && ctx.Err() == nil {
			q.log.Error("periodic job failed", "kind", p.kind, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.every):
		}
	}
}

// Notify wakes an idle worker of each lane; call it after committing an
// enqueue. On PostgreSQL River finds the job through LISTEN/NOTIFY, or at
// its next poll (FetchPollInterval, a second).
func (q *Queue) Notify() {
	for _, l := range q.lanes {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// Run rescues jobs orphaned by a previous process, then works until ctx
// ends, periodic jobs included; it returns after the jobs in progress
// finish. On PostgreSQL it
// runs River's client instead, which rescues jobs itself.
func (q *Queue) Run(ctx context.Context) {
	if q.db.Dialect() == store.Postgres {
		q.runRiver(ctx)
		return
	}
	if n, err := q.rescue(context.WithoutCancel(ctx), true); err != nil {
		q.log.Error("rescue orphaned jobs", "err", err)
	} else if n > 0 {
		q.log.Info("rescued jobs left running by a previous process", "jobs", n)
	}
	var wg sync.WaitGroup
	for _, l := range q.lanes {
		for range l.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q.work(ctx, l)
			}()
		}
	}
	for _, p := range append(q.periodic, periodic{kind: cleanupKind, every: time.Hour}) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.runPeriodic(ctx, p)
		}()
	}
	wg.Wait()
}

func (q *Queue) work(ctx context.Context, l *lane) {
	for ctx.Err() == nil {
		ran, err := q.runOne(ctx, l.name)
		if err != nil && ctx.Err() == nil {
			q.log.Error("job queue", "err", err)
		}
		if ran {
			continue
		}
		select {
		case <-ctx.Done():
		case <-l.wake:
		case <-time.After(q.poll):
			if _, err := q.rescue(ctx, false); err != nil && ctx.Err() == nil {
				q.log.Error("rescue expired jobs", "err", err)
			}
		}
	}
}

// RunOne claims one due job of any lane and runs it; it reports whether
// there was one. The job runs to completion even if ctx ends meanwhile
// (shutdown drains). It is the outbox's: on PostgreSQL, River's client
// works jobs (Run).
func (q *Queue) RunOne(ctx context.Context) (bool, error) {
	return q.runOne(ctx, "")
}

// runOne is RunOne for one lane ("" for any).
func (q *Queue) runOne(ctx context.Context, queue string) (bool, error) {
	if q.db.Dialect() == store.Postgres {
		return false, errors.New("jobs: RunOne is the SQLite outbox's; on PostgreSQL, Run works jobs with River")
	}
	j, ok, err := q.claim(ctx, queue)
	if err != nil || !ok {
		return false, err
	}
	h := q.handlers[j.Kind]
	var runErr error
	if h == nil {
		runErr = &Permanent{Err: fmt.Errorf("no handler for job kind %q", j.Kind)}
	} else {
		runErr = safeRun(context.WithoutCancel(ctx), h, j)
	}
	return true, q.finish(context.WithoutCancel(ctx), j, runErr)
}

func safeRun(ctx context.Context, h Handler, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job panicked: %v", p)
		}
	}()
	return h(ctx, j)
}

func (q *Queue) claim(ctx context.Context, queue string) (Job, bool, error) {
	var j Job
	var payload string
	found := false
	now := q.now()
	err := q.db.Transact(ctx, func(tx *store.Tx) error {
		found = false // a retried run starts afresh (store.Transact)
		err := tx.QueryRowContext(ctx, `
			UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_until = ?, updated_at = ?
			WHERE id = (SELECT id FROM jobs WHERE (? = '' OR queue = ?) AND state = 'available' AND run_at <= ? ORDER BY run_at, id LIMIT 1)
			  AND state = 'available' -- rechecked: on PostgreSQL another replica may have claimed it meanwhile
			RETURNING id, kind, payload, attempts, max_attempts`,
			store.FormatTime(now.Add(q.lease)), store.FormatTime(now), queue, queue, store.FormatTime(now)).
			Scan(&j.ID, &j.Kind, &payload, &j.Attempts, &j.MaxAttempts)
		j.Payload = json.RawMessage(payload)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	return j, found, nil
}

func (q *Queue) finish(ctx context.Context, j Job, runErr error) error {
	now := q.now()
	var perm *Permanent
	discard := runErr != nil && (errors.As(runErr, &perm) || j.Attempts >= j.MaxAttempts)
	// Logged once, outside the transaction, which may run more than once
	// (store.Transact).
	switch {
	case discard:
		q.log.Error("job discarded", "job", j.ID, "kind", j.Kind, "attempts", j.Attempts, "err", runErr)
	case runErr != nil:
		q.log.Warn("job failed; will retry", "job", j.ID, "kind", j.Kind, "attempt", j.Attempts, "err", runErr)
	}
	return q.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		switch {
		case runErr == nil:
			_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = 'done', locked_until = NULL, updated_at = ? WHERE id = ?`, store.FormatTime(now), j.ID)
		case discard:
			_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = 'discarded', locked_until = NULL, last_error = ?, updated_at = ? WHERE id = ?`,
				truncate(runErr.Error()), store.FormatTime(now), j.ID)
		default:
			_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = 'available', locked_until = NULL, last_error = ?, run_at = ?, updated_at = ? WHERE id = ?`,
				truncate(runErr.Error()), store.FormatTime(now.Add(q.backoff(j.Attempts))), store.FormatTime(now), j.ID)
		}
		return err
	})
}

// rescue makes jobs whose lease ran out available again. At start-up
// (all=true) every running job is an orphan of a dead process.
func (q *Queue) rescue(ctx context.Context, all bool) (int64, error) {
	var n int64
	now := store.FormatTime(q.now())
	err := q.db.Transact(ctx, func(tx *store.Tx) error {
		query := `UPDATE jobs SET state = 'available', locked_until = NULL, updated_at = ? WHERE state = 'running' AND locked_until < ?`
		args := []any{now, now}
		if all {
			query = `UPDATE jobs SET state = 'available', locked_until = NULL, updated_at = ? WHERE state = 'running'`
			args = args[:1]
		}
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

func truncate(s string) string {
	if len(s) > 1000 {
		return s[:1000]
	}
	return s
}

// CountPending is how many jobs are due or running, including those
// waiting for a retry; jobs scheduled for later (a pending action's
// expiry) are not counted.
func CountPending(ctx context.Context, db *store.DB) (int, error) {
	q := db.Read()
	if db.Dialect() == store.Postgres {
		return countRiver(ctx, q)
	}
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs
		WHERE state = 'running' OR (state = 'available' AND (run_at <= ? OR attempts > 0))`, store.Now()).Scan(&n)
	return n, err
}
