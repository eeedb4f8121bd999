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
func (s *Service) SweepInterrupted(ctx context.Context, olderThan time.Duration) (int, error) {
	return s.sweepBefore(ctx, s.o.Now().Add(-olderThan))
}

// SweepLeftRunning ends, at start-up, every journey a previous process
// left running: those admitted before this process started (started)
// cannot be running anywhere, since one Warden process serves its SQLite
// file. Without it a kill -9 would hold the journeys' budget reservations
// until the periodic sweep, and the tenant would get 402 with nothing
// spent.
func (s *Service) SweepLeftRunning(ctx context.Context, started time.Time) (int, error) {
	return s.sweepBefore(ctx, started)
}

func (s *Service) sweepBefore(ctx context.Context, before time.Time) (int, error) {
	cutoff := store.FormatTime(before)
	rows, err := s.o.DB.Read().QueryContext(ctx, `SELECT id, tenant_id, reserved_micros FROM journeys WHERE status = 'running' AND created_at < ?`, cutoff)
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
