package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// Resolved is what recovering an effect needs: the catalog entry, the
// provider (wrapped with tools.WithRetry, as Execute expects), the
// original call with its arguments, and the payload digest of that call.
// The digest must be the one the record is bound to, so arguments that
// are not the approved ones are refused.
type Resolved struct {
	Tool     tools.Tool
	Provider tools.Provider
	Call     tools.Call
	Digest   string
}

// Resolver finds the original call of a record, typically by looking up
// e.ActionID's sealed arguments. An error (the action is gone, the seal
// does not open) sends the record to review. Call.IdempotencyKey may be
// left empty: it is always the record's key.
type Resolver func(ctx context.Context, e Entry) (Resolved, error)

// ReconcileOptions shape one Reconcile run.
type ReconcileOptions struct {
	// Grace is how long a record must have been left alone (since its last
	// attempt or note) to count as stuck. Keys in flight in this process
	// are skipped whatever the grace; it must exceed the longest a call
	// can run (a tool's Timeout × MaxAttempts, plus backoff) only if
	// another process may execute effects on the same database.
	Grace time.Duration
	// Limit caps the records looked at, oldest first; 0 means 100. Each
	// one it looks at is touched, so the next run starts with others.
	Limit int
}

// Report says what one Reconcile run did, by idempotency key.
type Report struct {
	Recorded   []string // committed at the provider: its receipt recorded, nothing executed
	Reexecuted []string // not found at the provider: executed again with the same key, and recorded
	Failed     []string // executed again and refused by the provider: FAILED
	Retry      []string // executed again and failed transiently: still RESERVED, for the next run
	Review     []string // outcome unknown: still RESERVED, NeedsReview set, Error says why
	Busy       []string // being executed in this process right now: left alone
	// Completed is filled by the runtime's reconciler (runtime.Reconcile):
	// actions still executing although their effect was RECORDED — their
	// replica died between the ledger's record and the action's
	// completion — finished from the recorded receipt.
	Completed []string
}

// Reconcile finds records left RESERVED for longer than the grace — a
// crash between the provider's commit and Warden's record leaves them so
// — and re-asks the provider by the same key through tools.Looker:
//
//   - committed: the provider's receipt is recorded (RECORDED), without
//     executing anything;
//   - not_found: nothing happened, so the original call (from resolve) is
//     executed again with the same key, as Execute does;
//   - unknown, a lookup error, a provider that is not a Looker, or a
//     resolver that cannot produce the original call with the record's
//     key, tool and digest: the record is flagged NeedsReview and stays
//     RESERVED. Reconcile never makes up a new key, and never executes
//     when it cannot tell whether the effect happened.
//
// Later runs look at flagged records again and clear the flag once the
// provider answers. Records that are INTENDED (their job has not run yet),
// RECORDED or FAILED are left alone. Reconcile runs records one at a time;
// an error is returned only when the database fails, with the report so
// far.
func Reconcile(ctx context.Context, db *store.DB, resolve Resolver, opts ReconcileOptions) (Report, error) {
	var rep Report
	if opts.Limit <= 0 {
		opts.Limit = 100
	}
	stuck, err := listStuck(ctx, db, time.Now().Add(-opts.Grace), opts.Limit)
	if err != nil {
		return rep, err
	}
	for _, e := range stuck {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		out, err := reconcileOne(ctx, db, resolve, e)
		if err != nil {
			return rep, fmt.Errorf("reconcile effect %s: %w", e.Key, err)
		}
		rep.add(out, e.Key)
	}
	return rep, nil
}

// outcome is what reconcileOne did with a record.
type outcome int

const (
	settledElsewhere outcome = iota // not stuck any more: someone else settled it
	outRecorded
	outReexecuted
	outFailed
	outRetry
	outReview
	outBusy
)

func (r *Report) add(o outcome, key string) {
	switch o {
	case outRecorded:
		r.Recorded = append(r.Recorded, key)
	case outReexecuted:
		r.Reexecuted = append(r.Reexecuted, key)
	case outFailed:
		r.Failed = append(r.Failed, key)
	case outRetry:
		r.Retry = append(r.Retry, key)
	case outReview:
		r.Review = append(r.Review, key)
	case outBusy:
		r.Busy = append(r.Busy, key)
	}
}

func listStuck(ctx context.Context, db *store.DB, before time.Time, limit int) ([]Entry, error) {
	rows, err := db.Read().QueryContext(ctx, selectEntry+`
		WHERE state IN (?, ?) AND updated_at <= ? ORDER BY updated_at, idempotency_key LIMIT ?`,
		Reserved, Executed, store.FormatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("list stuck effects: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list stuck effects: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list stuck effects: %w", err)
	}
	return out, nil
}

// reconcileOne settles one stuck record. It returns an error only when the
// database fails.
func reconcileOne(ctx context.Context, db *store.DB, resolve Resolver, listed Entry) (outcome, error) {
	unlock, ok, err := tryLockEffect(ctx, db, listed.Key)
	if err != nil {
		return settledElsewhere, err
	}
	if !ok {
		return outBusy, nil
	}
	defer unlock()
	e, err := Get(ctx, db.Read(), listed.Key)
	if err != nil {
		return settledElsewhere, err
	}
	if e.State != Reserved && e.State != Executed {
		return settledElsewhere, nil
	}
	review := func(why string) (outcome, error) {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		if _, err := setNote(wctx, db, e.Key, "review: "+why, true); err != nil {
			return settledElsewhere, err
		}
		return outReview, nil
	}

	r, err := resolve(ctx, e)
	if err != nil {
		return review("the original call could not be resolved: " + err.Error())
	}
	switch {
	case r.Call.IdempotencyKey == "":
		r.Call.IdempotencyKey = e.Key
	case r.Call.IdempotencyKey != e.Key:
		return review("the resolver offered another idempotency key")
	}
	if name, err := tools.CallName(r.Tool, r.Call); err != nil || name != e.Tool || r.Call.Tenant != e.Tenant {
		return review("the resolved call is for another tool or tenant")
	}
	if r.Digest != e.Digest {
		return review("the resolved call's payload digest differs from the recorded one")
	}
	looker, ok := r.Provider.(tools.Looker)
	if !ok {
		return review("the provider cannot look up idempotency keys")
	}

	lctx, cancel := context.WithTimeout(ctx, timeout(r.Tool))
	res, status, err := looker.Lookup(lctx, r.Tool, e.Key)
	cancel()
	if err != nil {
		return review("lookup failed: " + reason(err))
	}
	switch status {
	case tools.LookupCommitted:
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		if _, err := recordAudited(wctx, db, e.Key, res.Output, "found_committed"); err != nil {
			return settledElsewhere, err
		}
		return outRecorded, nil
	case tools.LookupNotFound:
		_, err := execute(ctx, db, r.Provider, r.Tool, r.Call, r.Digest)
		switch {
		case err == nil:
			return outReexecuted, nil
		case errors.Is(err, ErrFailed):
			return outFailed, nil
		}
		return outRetry, nil
	}
	return review(fmt.Sprintf("the provider answered %q", status))
}

func timeout(t tools.Tool) time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return tools.DefaultTimeout
}

// CountNeedsReview is how many effects a crash left unconfirmed and the
// reconciler could not settle: on-call's to look at.
func CountNeedsReview(ctx context.Context, q store.Querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM effects WHERE needs_review = 1 AND state = 'reserved'`).Scan(&n)
	return n, err
}
