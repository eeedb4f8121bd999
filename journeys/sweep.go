package journeys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/store"
)

// SweepInterrupted ends journeys that a dead process left running: older
// than olderThan and not running here, they are marked failed
// ("interrupted") and their budget reservations are released, so a crash
// neither shrinks a budget for good nor leaves a journey running forever.
//
// With several replicas on one PostgreSQL database (Options.ReplicaID
// set), a journey another replica admitted is ended only once that
// replica's heartbeat is older than store.ReplicaStaleAfter, whatever the
// journey's age; one that a live replica admitted is that replica's to
// sweep.
func (s *Service) SweepInterrupted(ctx context.Context, olderThan time.Duration) (int, error) {
	return s.sweepBefore(ctx, s.o.Now().Add(-olderThan))
}

// SweepLeftRunning ends, at start-up, every journey a previous process
// left running: those admitted before this process started (started).
// On SQLite none can be running anywhere, since one Warden process serves
// its file. On PostgreSQL with replicas, only the journeys of replicas
// whose heartbeat stopped (and those admitted before replicas were
// recorded) are ended: another replica's live journeys go on. Without it
// a kill -9 would hold the journeys' budget reservations until the
// periodic sweep, and the tenant would get 402 with nothing spent.
func (s *Service) SweepLeftRunning(ctx context.Context, started time.Time) (int, error) {
	return s.sweepBefore(ctx, started)
}

// multiReplica reports whether other replicas may be running journeys on
// this database.
func (s *Service) multiReplica() bool {
	return s.o.ReplicaID != "" && s.o.DB.Dialect() == store.Postgres
}

func (s *Service) sweepBefore(ctx context.Context, before time.Time) (int, error) {
	cutoff := store.FormatTime(before)
	query, args := `SELECT id, tenant_id, reserved_micros FROM journeys WHERE status = 'running' AND created_at < ?`, []any{cutoff}
	if s.multiReplica() {
		query = `SELECT id, tenant_id, reserved_micros FROM journeys WHERE status = 'running' AND (
			(created_at < ? AND replica_id IN ('', ?))
			OR (replica_id NOT IN ('', ?) AND replica_id NOT IN (SELECT id FROM replicas WHERE last_seen >= ?)))`
		args = []any{cutoff, s.o.ReplicaID, s.o.ReplicaID, store.LiveReplicaCutoff(s.o.Now())}
	}
	type stale struct {
		id, tenant string
		reserved   int64
	}
	all, err := store.Query(ctx, s.o.DB.Read(), func(r store.Scanner) (stale, error) {
		var st stale
		err := r.Scan(&st.id, &st.tenant, &st.reserved)
		return st, err
	}, query, args...)
	if err != nil {
		return 0, err
	}
	var found []stale
	for _, st := range all {
		if _, here := s.running.Load(st.id); !here {
			found = append(found, st)
		}
	}
	n := 0
	for _, st := range found {
		ended, err := s.endRunning(ctx, st.id, st.tenant, st.reserved, StatusFailed, "interrupted")
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}

// endRunning ends journey id as status (with code) if it is still
// running, and gives its reservation back, in one transaction; it reports
// whether it ended it. A journey another write ended first is left as it
// is: its reservation went back then.
func (s *Service) endRunning(ctx context.Context, id, tenant string, reserved int64, status, code string) (bool, error) {
	ended := false
	err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		ended = false
		res, err := tx.ExecContext(ctx, `UPDATE journeys SET status = ?, error_code = ?, finished_at = ?
			WHERE id = ? AND status = 'running'`, status, code, store.Now(), id)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return nil
		}
		if err := budgets.Release(ctx, tx, tenant, reserved); err != nil {
			return err
		}
		ended = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("end journey %s: %w", id, err)
	}
	return ended, nil
}

// abandon ends a journey whose admission reported an error: a commit
// reported failed may have committed (a connection lost during COMMIT),
// and the journey would then hold its reservation, running, with nobody
// to end it but a sweep. Ending one that was never written changes
// nothing.
func (s *Service) abandon(j *Journey) {
	err := s.ending(func(ctx context.Context) error {
		_, err := s.endRunning(ctx, j.ID, j.TenantID, j.ReservedMicros, StatusFailed, CodeInternal)
		return err
	})
	if err != nil {
		s.o.Log.Error("could not end a journey whose admission failed; the sweep will", "journey", j.ID, "err", err)
	}
}

// Shutdown ends this process's journeys as it stops, once it serves no
// more requests and its job workers have stopped (agent.Runtime.Run):
// the journeys still running here are stopped (their contexts end with
// ErrShuttingDown, and they end cancelled, charging what ran) and given
// up to wait to write their ends; then every journey this replica
// admitted or continued that is still running — one whose goroutine is
// stuck, or whose end could not be written — ends failed
// ("interrupted") and its reservation is released, instead of waiting
// for the next start's sweep. It returns how many it ended that way.
func (s *Service) Shutdown(ctx context.Context, wait time.Duration) (int, error) {
	s.running.Range(func(_, stop any) bool {
		stop.(context.CancelCauseFunc)(ErrShuttingDown)
		return true
	})
	deadline := time.Now().Add(wait)
	for s.runningHere() > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	type left struct {
		id, tenant string
		reserved   int64
	}
	var found []left
	if s.o.ReplicaID != "" {
		var err error
		found, err = store.Query(ctx, s.o.DB.Read(), func(r store.Scanner) (left, error) {
			var l left
			err := r.Scan(&l.id, &l.tenant, &l.reserved)
			return l, err
		}, `SELECT id, tenant_id, reserved_micros FROM journeys
			WHERE status = 'running' AND replica_id = ?`, s.o.ReplicaID)
		if err != nil {
			return 0, fmt.Errorf("journeys left running: %w", err)
		}
	} else {
		// Without a replica id (tests, tools) only the journeys this
		// process knows it runs are its own.
		s.running.Range(func(id, _ any) bool {
			if j, err := GetJourney(ctx, s.o.DB.Read(), id.(string)); err == nil && j.Status == StatusRunning {
				found = append(found, left{j.ID, j.TenantID, j.ReservedMicros})
			}
			return true
		})
	}
	n := 0
	var errs error
	for _, l := range found {
		ended, err := s.endRunning(ctx, l.id, l.tenant, l.reserved, StatusFailed, "interrupted")
		errs = errors.Join(errs, err)
		if ended {
			n++
		}
	}
	return n, errs
}

// runningHere counts the journeys running in this process.
func (s *Service) runningHere() int {
	n := 0
	s.running.Range(func(_, _ any) bool { n++; return true })
	return n
}
