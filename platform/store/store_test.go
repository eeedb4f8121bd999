package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "warden.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestMigrationsApplyToEmptyDatabaseAndAreIdempotent(t *testing.T) {
	ctx := context.Background()
	db, path := openAny(t)
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready after first open: %v", err)
	}
	var n int
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := latestVersion(db.Dialect()); n != want || want == 0 {
		t.Fatalf("schema_migrations has %d rows, want %d", n, want)
	}
	if err := createTenantTx(ctx, db, "acme", "Acme"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A restart applies nothing twice and keeps the data.
	db2, err := OpenURL(ctx, path, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db2.Close()
	if err := db2.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != latestVersion(db2.Dialect()) {
		t.Fatalf("after restart schema_migrations has %d rows, want %d", n, latestVersion(db2.Dialect()))
	}
	if c, _ := countTenants(ctx, db2); c != 1 {
		t.Fatalf("after restart CountTenants = %d, want 1", c)
	}
}

// createTenantTx writes one tenants row in its own transaction. The
// tenants package owns that table; these tests only need a row to exist.
func createTenantTx(ctx context.Context, db *DB, slug, name string) error {
	return db.Transact(ctx, func(tx *Tx) error { return insertTenant(ctx, tx, slug, name) })
}

func insertTenant(ctx context.Context, tx *Tx, slug, name string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO tenants (id, slug, name, frozen, created_at) VALUES (?, ?, ?, 0, ?)`, NewID(), slug, name, Now())
	return err
}

func countTenants(ctx context.Context, db *DB) (int64, error) {
	var n int64
	err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&n)
	return n, err
}

func TestDatabaseFileIsPrivate(t *testing.T) {
	_, path := openTemp(t)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		t.Fatalf("database file mode = %o, want 600", mode)
	}
}

func TestTransactRollsBackOnErrorAndPanic(t *testing.T) {
	ctx := context.Background()
	db, _ := openAny(t)
	boom := errors.New("boom")
	err := db.Transact(ctx, func(tx *Tx) error {
		if err := insertTenant(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Transact error = %v, want boom", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Transact swallowed a panic")
			}
		}()
		_ = db.Transact(ctx, func(tx *Tx) error {
			if err := insertTenant(ctx, tx, "globex", "Globex"); err != nil {
				return err
			}
			panic("crash")
		})
	}()
	if n, _ := countTenants(ctx, db); n != 0 {
		t.Fatalf("after rollbacks CountTenants = %d, want 0", n)
	}
	// The single write connection is usable again after the panic.
	if err := createTenantTx(ctx, db, "acme", "Acme"); err != nil {
		t.Fatalf("write after rollback: %v", err)
	}
}

func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	if err := createTenantTx(ctx, db, "acme", "Acme"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	defer ro.Close()
	if v, err := ro.SchemaVersion(ctx); err != nil || v != latestVersion(SQLite) {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, latestVersion(SQLite))
	}
	if n, err := countTenants(ctx, ro); err != nil || n != 1 {
		t.Errorf("CountTenants = %d, %v; want 1", n, err)
	}
	if err := ro.Transact(ctx, func(*Tx) error { return nil }); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Transact on a read-only database = %v, want ErrReadOnly", err)
	}
	if _, err := ro.Read().ExecContext(ctx, `DELETE FROM tenants`); err == nil {
		t.Error("a write through the read pool succeeded")
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the database file changed (%v)", err)
	}

	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := OpenReadOnly(ctx, missing); err == nil {
		t.Error("OpenReadOnly of a missing file succeeded")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s: %v", missing, err)
	}
	if _, err := OpenReadOnly(ctx, t.TempDir()); err == nil {
		t.Error("OpenReadOnly of a directory succeeded")
	}
}
