package runtime

import (
	"context"
	"database/sql"
	"time"

	"github.com/wardenhq/warden/agent/budget"
	"github.com/wardenhq/warden/store"
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
	rows, err := s.o.DB.Read().QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	type stale struct {
		id, tenant string
		reserved   int64
	}
	var found []stale
	for rows.Next() {
		var st stale
		if err := rows.Scan(&st.id, &st.tenant, &st.reserved); err != nil {
			rows.Close()
			return 0, err
		}
		if _, here := s.running.Load(st.id); !here {
			found = append(found, st)
		}
	}
	rows.Close()
	n := 0
	for _, st := range found {
		err := s.o.DB.Transact(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'failed', error_code = 'interrupted', finished_at = ?
				WHERE id = ? AND status = 'running'`, store.Now(), st.id)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k == 0 {
				return nil
			}
			n++
			return budget.Release(ctx, tx, st.tenant, st.reserved)
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
