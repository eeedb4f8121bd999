package journeys

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// TestSweepLeavesLiveReplicasJourneys: a replica starting up, or sweeping
// every minute, ends the journeys of a replica whose heartbeat stopped
// (and those admitted before replicas were recorded), and releases their
// reservations, but on PostgreSQL never a live replica's journeys,
// however old. On SQLite one process serves the file: every journey
// admitted before start-up is ended, as before.
func TestSweepLeavesLiveReplicasJourneys(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now()
	var tenant tenants.Tenant
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Total, LimitMicros: 1_000_000, AlertPercent: 80}, now)
	}); err != nil {
		t.Fatal(err)
	}
	live, err := store.RegisterReplica(ctx, db, now)
	if err != nil {
		t.Fatal(err)
	}
	dead, err := store.RegisterReplica(ctx, db, now.Add(-store.ReplicaStaleAfter-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	const each = 100
	admitted := now.Add(-time.Hour) // older than the periodic sweep's bound
	journeys := map[string]string{"j-live": live.ID, "j-dead": dead.ID, "j-unowned": ""}
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		for id, replica := range journeys {
			if _, err := tx.ExecContext(ctx, `INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest,
				status, reserved_micros, created_at, replica_id) VALUES (?, ?, ?, ?, 'sha256:x', 'running', ?, ?, ?)`,
				id, tenant.ID, "req-"+id, "cor-"+id, each, store.FormatTime(admitted), replica); err != nil {
				return err
			}
			if err := budgets.Reserve(ctx, tx, tenant.ID, each, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	starting, err := store.RegisterReplica(ctx, db, now)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(Options{DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now, ReplicaID: starting.ID})
	n, err := svc.SweepLeftRunning(ctx, starting.Started)
	if err != nil {
		t.Fatal(err)
	}
	if n2, err := svc.SweepInterrupted(ctx, 15*time.Minute); err != nil {
		t.Fatal(err)
	} else {
		n += n2
	}
	status := func(id string) string {
		var s string
		if err := db.Read().QueryRowContext(ctx, `SELECT status FROM journeys WHERE id = ?`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	b, err := budgets.Get(ctx, db.Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !storetest.Postgres() {
		if n != 3 || b.ReservedMicros != 0 {
			t.Errorf("SQLite: swept %d journeys, %d micro-units still reserved; want all 3 ended, 0", n, b.ReservedMicros)
		}
		return
	}
	if n != 2 {
		t.Errorf("swept %d journeys, want 2 (the dead replica's and the unowned one)", n)
	}
	for id, want := range map[string]string{"j-live": "running", "j-dead": "failed", "j-unowned": "failed"} {
		if got := status(id); got != want {
			t.Errorf("journey %s is %s, want %s", id, got, want)
		}
	}
	if b.ReservedMicros != each {
		t.Errorf("%d micro-units reserved, want %d (the live journey's)", b.ReservedMicros, each)
	}
}
