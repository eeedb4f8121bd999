package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/problem"
)

// fillDisk makes the write connection refuse to grow the database, as a
// full disk does (SQLITE_FULL); lift undoes it. The write pool has one
// connection, so a PRAGMA run through Transact stays in force.
func fillDisk(t testing.TB, db *DB) (lift func()) {
	t.Helper()
	ctx := context.Background()
	setMax := func(q func(tx *Tx) (int64, error)) {
		if err := db.Transact(ctx, func(tx *Tx) error {
			n, err := q(tx)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	setMax(func(tx *Tx) (n int64, err error) {
		err = tx.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&n)
		return n, err
	})
	return func() { setMax(func(*Tx) (int64, error) { return 1 << 30, nil }) }
}

// A write that fails because the disk is full is ErrStorageUnavailable
// (503 with Retry-After, whatever the caller wrapped around it), the
// database reports itself not ready, and it is ready again by itself once
// a probe write succeeds.
func TestFullDiskIsStorageUnavailable(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lift := fillDisk(t, db)
	big := strings.Repeat("x", 64<<10)
	err = db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO write_probes (at) VALUES (?)`, big)
		return fmt.Errorf("record something: %w", err)
	})
	var p *problem.Error
	if !errors.Is(err, ErrStorageUnavailable) || !errors.As(err, &p) || p.Status() != 503 || p.RetryAfter <= 0 {
		t.Fatalf("write on a full disk = %v; want ErrStorageUnavailable (503, Retry-After)", err)
	}
	if err := db.Ready(ctx); err == nil {
		t.Error("Ready while writes fail = nil, want an error")
	}
	// A statement's own mistake is not a storage failure.
	if err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO no_such_table VALUES (1)`)
		return err
	}); errors.Is(err, ErrStorageUnavailable) {
		t.Errorf("a bad statement = %v, classified as storage unavailable", err)
	}
	lift()
	if err := db.Ready(ctx); err != nil {
		t.Errorf("Ready after the disk has room again = %v, want nil", err)
	}
}
