package store

import (
	"context"
	"os"
	"sync/atomic"
	"time"
)

// Replica heartbeats. Every Warden process registers a row in replicas
// when it starts and refreshes its last_seen every HeartbeatEvery. A
// replica whose last_seen is older than ReplicaStaleAfter is taken for
// dead: the sweeps may end the journeys it admitted, and it no longer
// counts among the replicas the per-replica rate limits divide by.
//
// ReplicaStaleAfter is several heartbeats so that a slow database or a
// long GC pause does not make a live replica look dead; the replicas'
// clocks must agree to well within it (NTP).
const (
	HeartbeatEvery    = 2 * time.Second
	ReplicaStaleAfter = 15 * time.Second
)

// Replica is this process's entry in the replicas table.
type Replica struct {
	ID      string
	Started time.Time
	db      *DB
	live    atomic.Int64 // replicas alive at the last heartbeat (at least 1)
}

// RegisterReplica records this process as a replica of db, alive now.
func RegisterReplica(ctx context.Context, db *DB, now time.Time) (*Replica, error) {
	host, _ := os.Hostname()
	r := &Replica{ID: NewID(), Started: now, db: db}
	r.live.Store(1)
	err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO replicas (id, hostname, started_at, last_seen) VALUES (?, ?, ?, ?)`,
			r.ID, host, FormatTime(now), FormatTime(now))
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := r.Heartbeat(ctx, now); err != nil {
		return nil, err
	}
	return r, nil
}

// Heartbeat refreshes last_seen, forgets replicas dead for long (an hour
// past the bound) and counts the replicas alive.
func (r *Replica) Heartbeat(ctx context.Context, now time.Time) error {
	err := r.db.Transact(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE replicas SET last_seen = ? WHERE id = ?`, FormatTime(now), r.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM replicas WHERE last_seen < ?`,
			FormatTime(now.Add(-ReplicaStaleAfter-time.Hour)))
		return err
	})
	if err != nil {
		return err
	}
	var n int64
	if err := r.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM replicas WHERE last_seen >= ?`,
		FormatTime(now.Add(-ReplicaStaleAfter))).Scan(&n); err != nil {
		return err
	}
	r.live.Store(max(n, 1))
	return nil
}

// Run heartbeats every HeartbeatEvery until ctx ends; a failed heartbeat
// is retried at the next tick (report, when set, hears of it).
func (r *Replica) Run(ctx context.Context, report func(error)) {
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := r.Heartbeat(ctx, now); err != nil && ctx.Err() == nil && report != nil {
				report(err)
			}
		}
	}
}

// Live is the number of replicas alive at the last heartbeat, this one
// included. On SQLite it is 1: one process serves the file.
func (r *Replica) Live() int {
	if r == nil || r.db.Dialect() != Postgres {
		return 1
	}
	return int(r.live.Load())
}

// LiveReplicaCutoff is the last_seen below which a replica is dead at now.
func LiveReplicaCutoff(now time.Time) string { return FormatTime(now.Add(-ReplicaStaleAfter)) }
