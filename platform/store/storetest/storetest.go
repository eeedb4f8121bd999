// Package storetest opens databases for tests on either engine: SQLite in
// the test's temporary directory, or, when WARDEN_TEST_POSTGRES names a
// PostgreSQL server (postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable),
// a fresh place of the test's own on that server.
//
// On PostgreSQL a package whose TestMain calls Main gets one database for
// the whole test binary, created at the first test that asks and dropped
// when the tests end, and every test gets its own schema in it (its
// search_path), dropped at the test's cleanup: dropping a database makes
// the server checkpoint, which costs seconds on a busy server, and a
// schema costs nothing. Without Main, each test gets a database of its
// own, dropped at its cleanup.
//
// On SQLite, Open starts each test from a copy of one database migrated
// once per test binary (SeedSQLite): migrating from scratch costs tens of
// milliseconds per database, a file copy almost nothing. The migrator
// still runs on the copy and finds nothing to do; the store's own tests
// migrate from scratch.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", for CREATE and DROP

	"github.com/wardenhq/warden/platform/store"
)

// EnvPostgres is the variable naming the PostgreSQL server tests use.
const EnvPostgres = "WARDEN_TEST_POSTGRES"

// Postgres reports whether tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvPostgres) != "" }

// Open returns a new, migrated database for t on the engine the
// environment chooses, closed (and on PostgreSQL dropped) at cleanup.
func Open(t testing.TB) *store.DB {
	t.Helper()
	u := URL(t)
	if !Postgres() {
		SeedSQLite(t, u)
	}
	db, err := store.OpenURL(context.Background(), u, store.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var sqliteTemplate struct {
	once sync.Once
	data []byte // a migrated SQLite database, its write-ahead log checkpointed
	err  error
}

// SeedSQLite writes a migrated SQLite database at path, which must not
// exist yet, as a copy of the template this test binary migrated once.
// Opening it with store.Open applies no migration.
func SeedSQLite(t testing.TB, path string) {
	t.Helper()
	sqliteTemplate.once.Do(func() { sqliteTemplate.data, sqliteTemplate.err = migratedSQLite() })
	if sqliteTemplate.err != nil {
		t.Fatalf("migrate the template database: %v", sqliteTemplate.err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatalf("seed test database: %v", err)
	}
	if _, err := f.Write(sqliteTemplate.data); err != nil {
		f.Close()
		t.Fatalf("seed test database: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("seed test database: %v", err)
	}
}

// migratedSQLite migrates a new SQLite database in a directory of its own
// and returns the file's content, with everything in its write-ahead log
// checkpointed into it.
func migratedSQLite() ([]byte, error) {
	dir, err := os.MkdirTemp("", "warden-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "warden.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return nil, err
	}
	if _, err := raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		raw.Close()
		return nil, err
	}
	if err := raw.Close(); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
		return nil, fmt.Errorf("template database %s: write-ahead log not checkpointed (%d bytes)", path, st.Size())
	}
	return os.ReadFile(path)
}

var shared struct {
	sync.Mutex
	main bool   // Main runs the tests: share one database
	name string // the shared database, once created
	url  *url.URL
}

// Main runs the tests of a package (call it from TestMain) and then drops
// the PostgreSQL database they shared, if any.
func Main(m *testing.M) {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	if shared.name != "" {
		if err := adminExec(context.Background(), "DROP DATABASE IF EXISTS "+shared.name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "storetest: drop database %s: %v\n", shared.name, err)
			if code == 0 {
				code = 1
			}
		}
	}
	shared.Unlock()
	os.Exit(code)
}

// URL names a new, empty database for t without opening it: a file in
// t.TempDir(), or on PostgreSQL a schema (under Main) or database of its
// own, removed at cleanup after everything t opened on it was closed
// (cleanups registered later run first).
func URL(t testing.TB) string {
	t.Helper()
	server := os.Getenv(EnvPostgres)
	if server == "" {
		return filepath.Join(t.TempDir(), "warden.db")
	}
	ctx := context.Background()
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		name := newName("warden_test_")
		if err := adminExec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create test database: %v", err)
		}
		t.Cleanup(func() {
			if err := adminExec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				t.Errorf("drop test database %s: %v", name, err)
			}
		})
		return withPath(t, server, name, "")
	}
	if shared.name == "" {
		name := newName("warden_test_")
		if err := adminExec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create test database: %v", err)
		}
		shared.name = name
	}
	dbURL := withPath(t, server, shared.name, "")
	schema := newName("t_")
	if err := execOn(ctx, dbURL, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	t.Cleanup(func() {
		if err := execOn(ctx, dbURL, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return withPath(t, server, shared.name, schema)
}

func newName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// withPath is the server URL pointed at database name and, if set, at
// schema first in the search path.
func withPath(t testing.TB, server, name, schema string) string {
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	u.Path = "/" + name
	if schema != "" {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func adminExec(ctx context.Context, stmt string) error {
	return execOn(ctx, os.Getenv(EnvPostgres), stmt)
}

func execOn(ctx context.Context, dsn, stmt string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// NoConflicts makes t fail, once it has ended (after the cleanups
// registered later: the replicas stop first), when PostgreSQL aborted a
// statement on db's database as a deadlock or serialization failure
// since this call (store.TxStats): Warden takes its locks in one order
// (action row → budget row → audit chain), so no transaction has to be
// run again. It counts the statements of every handle on the same
// database in this process. Nothing to check on SQLite.
func NoConflicts(t testing.TB, db *store.DB) {
	t.Helper()
	before := db.TxStats()
	t.Cleanup(func() {
		if got := db.TxStats().Sub(before); got.Conflicts != 0 {
			t.Errorf("%d statements aborted as deadlock or serialization failure and run again (%d write transactions committed); want none",
				got.Conflicts, got.Commits)
		}
	})
}
