package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Failed is a job that failed for good: out of attempts, or stopped by a
// permanent error. It stays until an operator retries it (on PostgreSQL
// River deletes it after a week).
type Failed struct {
	ID          int64
	Kind        string
	Attempts    int
	MaxAttempts int
	Permanent   bool   // a *Permanent error stopped it; else it ran out of attempts
	Error       string // the last error, as the handler returned it
	At          time.Time
	// ActionID and JourneyID are what the job was about, when its
	// payload names them.
	ActionID  string
	JourneyID string
}

// ErrNotFailed refuses to retry a job that is not (or no longer) failed.
var ErrNotFailed = errors.New("the job has not failed for good (it is waiting, running or done)")

// ListFailed returns the newest jobs that failed for good, at most limit,
// and how many there are in all.
func ListFailed(ctx context.Context, db *store.DB, limit int) ([]Failed, int, error) {
	q := db.Read()
	var total int
	count, list := `SELECT COUNT(*) FROM jobs WHERE state = 'discarded'`,
		`SELECT id, kind, state, attempts, max_attempts, COALESCE(last_error, ''), updated_at, payload
		FROM jobs WHERE state = 'discarded' ORDER BY updated_at DESC, id DESC LIMIT ?`
	if db.Dialect() == store.Postgres {
		count, list = `SELECT COUNT(*) FROM river_job WHERE state IN ('discarded', 'cancelled')`,
			`SELECT id, kind, state::text, attempt, max_attempts, COALESCE(errors[array_length(errors, 1)]->>'error', ''),
				to_char(COALESCE(finalized_at, created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US000"Z"'), (args->'payload')::text
			FROM river_job WHERE state IN ('discarded', 'cancelled') ORDER BY finalized_at DESC NULLS LAST, id DESC LIMIT ?`
	}
	if err := q.QueryRowContext(ctx, count).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count failed jobs: %w", err)
	}
	out, err := store.Query(ctx, q, scanFailed, list, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list failed jobs: %w", err)
	}
	return out, total, nil
}

func scanFailed(s store.Scanner) (Failed, error) {
	var f Failed
	var state, at, payload string
	if err := s.Scan(&f.ID, &f.Kind, &state, &f.Attempts, &f.MaxAttempts, &f.Error, &at, &payload); err != nil {
		return Failed{}, err
	}
	f.At, _ = time.Parse(time.RFC3339Nano, at)
	// River's cancelled is the outbox's discarded by a permanent error.
	f.Permanent = state == "cancelled" || strings.HasPrefix(f.Error, "permanent: ")
	f.Error = strings.TrimPrefix(strings.TrimPrefix(f.Error, "JobCancelError: "), "permanent: ")
	var about struct {
		ActionID  string `json:"action_id"`
		JourneyID string `json:"journey_id"`
	}
	_ = json.Unmarshal([]byte(payload), &about) // a payload naming neither is fine
	f.ActionID, f.JourneyID = about.ActionID, about.JourneyID
	return f, nil
}

// ErrNotFound is a job id that names no job; errors.Is matches it against
// store.ErrNotFound.
var ErrNotFound = problem.NotFound("not_found", "There is no such job.")

// Retry makes a failed job run again, at once, with one more attempt;
// record writes what the retry leaves in the audit trail (the caller's
// audit.JobRetried), in the same transaction. Handlers are idempotent, so
// a job whose work was done meanwhile finds nothing left to do.
func Retry(ctx context.Context, db *store.DB, id int64, record func(ctx context.Context, tx *store.Tx, kind string) error) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		kind, err := retry(ctx, tx, id)
		if err != nil {
			return err
		}
		return record(ctx, tx, kind)
	})
}

// retry makes job id available again inside tx and returns its kind.
func retry(ctx context.Context, tx *store.Tx, id int64) (string, error) {
	var kind, state string
	if tx.Dialect() == store.Postgres {
		err := tx.QueryRowContext(ctx, `SELECT kind, state::text FROM river_job WHERE id = ? FOR UPDATE`, id).Scan(&kind, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return "", ErrNotFound
		}
		if err != nil {
			return "", fmt.Errorf("retry job %d: %w", id, err)
		}
		if state != "discarded" && state != "cancelled" {
			return "", ErrNotFailed
		}
		c, err := inserter()
		if err == nil {
			_, err = c.JobRetryTx(ctx, tx.Tx, id)
		}
		if err != nil {
			return "", fmt.Errorf("retry job %d: %w", id, err)
		}
		return kind, nil
	}
	err := tx.QueryRowContext(ctx, `SELECT kind, state FROM jobs WHERE id = ?`, id).Scan(&kind, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("retry job %d: %w", id, err)
	}
	if state != "discarded" {
		return "", ErrNotFailed
	}
	now := store.Now()
	_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = 'available', run_at = ?, updated_at = ?,
		max_attempts = CASE WHEN attempts >= max_attempts THEN attempts + 1 ELSE max_attempts END
		WHERE id = ? AND state = 'discarded'`, now, now, id)
	if err != nil {
		return "", fmt.Errorf("retry job %d: %w", id, err)
	}
	return kind, nil
}
