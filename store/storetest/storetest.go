// Package storetest opens databases for tests on either engine: SQLite in
// the test's temporary directory, or, when WARDEN_TEST_POSTGRES names a
// PostgreSQL server (postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable),
// a database of its own on that server, created for the test and dropped
// when it ends.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", for CREATE and DROP DATABASE

	"github.com/wardenhq/warden/store"
)

// EnvPostgres is the variable naming the PostgreSQL server tests use.
const EnvPostgres = "WARDEN_TEST_POSTGRES"

// Postgres reports whether tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvPostgres) != "" }

// Open returns a new, migrated database for t on the engine the
// environment chooses, closed (and on PostgreSQL dropped) at cleanup.
func Open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.OpenURL(context.Background(), URL(t), store.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// URL names a new, empty database for t without opening it: a file in
// t.TempDir(), or a PostgreSQL database created now and dropped at
// cleanup (after everything t opened on it has been closed: cleanups
// registered later run first).
func URL(t testing.TB) string {
	t.Helper()
	server := os.Getenv(EnvPostgres)
	if server == "" {
		return filepath.Join(t.TempDir(), "warden.db")
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "warden_test_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create test database on %s: %v", u.Host, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
