package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
)

// openAny opens a fresh database for t on the engine the environment
// chooses, as storetest.Open does (which this package's own tests cannot
// import): SQLite in t.TempDir(), or a database of its own on the
// PostgreSQL server WARDEN_TEST_POSTGRES names, dropped at cleanup. It
// returns the database and what reopens it (a path or a URL).
func openAny(t *testing.T) (*DB, string) {
	t.Helper()
	server := os.Getenv("WARDEN_TEST_POSTGRES")
	if server == "" {
		return openTemp(t)
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "warden_test_" + hex.EncodeToString(b)
	admin, err := sql.Open(pgDriverName, server)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	db, err := OpenURL(ctx, u.String(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, u.String()
}
