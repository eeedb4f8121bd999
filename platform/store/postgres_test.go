package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// Two replicas starting together on a fresh database both open it, and
// every migration is applied once. On SQLite (one process per file) the
// opens take turns: switching a fresh file to WAL can fail with
// SQLITE_BUSY while another connection is doing the same, which CI hit.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	ctx := context.Background()
	u := storetest.URL(t)
	dir := t.TempDir()
	const n = 4
	dbs := make([]*store.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		if !storetest.Postgres() {
			dbs[i], errs[i] = store.OpenURL(ctx, u, store.Options{DataDir: dir})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = store.OpenURL(ctx, u, store.Options{DataDir: dir})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	db := dbs[0]
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	var rows, distinct, top int
	if err := db.Read().QueryRowContext(ctx,
		`SELECT COUNT(*), COUNT(DISTINCT version), MAX(version) FROM schema_migrations`).Scan(&rows, &distinct, &top); err != nil {
		t.Fatal(err)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rows != distinct || rows != top || top != v || v < 20 {
		t.Fatalf("schema_migrations: %d rows, %d versions, newest %d (SchemaVersion %d); want each version once", rows, distinct, top, v)
	}
}

// The append-only triggers hold on both engines.
func TestAuditEventsAreAppendOnly(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_events (seq, time, actor_type, actor_id, verb, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, 1, store.Now(), "system", "t", "test.event", "p", "h")
		return err
	})
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	for _, q := range []string{`UPDATE audit_events SET verb = 'x'`, `DELETE FROM audit_events`} {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, q)
			return err
		})
		if err == nil {
			t.Errorf("%s succeeded, want it refused", q)
		}
	}
}

// A write on storage that refuses writes is ErrStorageUnavailable, and
// /readyz's Ready says so until writes work again.
func TestFailWritesIsStorageUnavailableOnBothEngines(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	if err := db.FailWrites(ctx, true); err != nil {
		t.Fatal(err)
	}
	_, err := storeTenant(ctx, db, "acme")
	if !errors.Is(err, store.ErrStorageUnavailable) {
		t.Fatalf("write with writes failing: %v, want ErrStorageUnavailable", err)
	}
	// The transaction fails before its function runs, so a caller that
	// turns its own errors into problems cannot hide the storage failure.
	ran := false
	if err := db.Transact(ctx, func(*store.Tx) error { ran = true; return nil }); !errors.Is(err, store.ErrStorageUnavailable) || ran {
		t.Fatalf("Transact with writes failing = %v (function ran: %v), want ErrStorageUnavailable before it runs", err, ran)
	}
	if err := db.Ready(ctx); err == nil {
		t.Fatal("Ready with writes failing = nil, want an error")
	}
	if err := db.FailWrites(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready after writes recover: %v", err)
	}
	if _, err := storeTenant(ctx, db, "acme"); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
}

func storeTenant(ctx context.Context, db *store.DB, slug string) (tenants.Tenant, error) {
	var tn tenants.Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		tn, err = tenants.Insert(ctx, tx, slug, "Acme")
		return err
	})
	return tn, err
}

// A connection PostgreSQL drops mid-transaction is a storage failure:
// ErrStorageUnavailable (503 with Retry-After), not a bad request; and the
// pool recovers with a new connection for the next write.
func TestLostPostgresConnectionIsStorageUnavailable(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	db := storetest.Open(t)
	err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
		return err
	})
	if !errors.Is(err, store.ErrStorageUnavailable) {
		t.Fatalf("transaction on a terminated connection: %v, want ErrStorageUnavailable", err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready after the pool reconnects: %v", err)
	}
	if _, err := storeTenant(ctx, db, "acme"); err != nil {
		t.Fatalf("write after reconnecting: %v", err)
	}
}

// The pool size and statement timeout settings reach the pool and the
// server's sessions.
func TestPostgresSettingsApply(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	db, err := store.OpenURL(ctx, storetest.URL(t), store.Options{DataDir: t.TempDir(), MaxConns: 7, StatementTimeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Read().Stats().MaxOpenConnections; got != 7 {
		t.Errorf("pool size %d, want 7", got)
	}
	var timeout, app string
	if err := db.Read().QueryRowContext(ctx, `SELECT current_setting('statement_timeout'), current_setting('application_name')`).Scan(&timeout, &app); err != nil {
		t.Fatal(err)
	}
	if timeout != "1500ms" || app != "warden" {
		t.Errorf("statement_timeout %q, application_name %q; want 1500ms and warden", timeout, app)
	}
	if db.Dialect() != store.Postgres {
		t.Errorf("Dialect = %v, want postgres", db.Dialect())
	}
}

// A pool of one connection still migrates a fresh database, River's
// tables included: the migration lock's connection and River's migration
// do not wait on each other.
func TestPostgresPoolOfOneMigrates(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.OpenURL(ctx, storetest.URL(t), store.Options{DataDir: t.TempDir(), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Read().QueryRowContext(ctx, `SELECT count(*) FROM river_migration`).Scan(&n); err != nil || n == 0 {
		t.Errorf("river_migration rows = %d, %v; want River's versions applied", n, err)
	}
}
