package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wardenhq/warden/platform/problem"
)

// ErrStorageUnavailable is every write that failed because of the storage
// rather than the data: a full disk, an I/O error, a read-only or
// vanished file, a lock held past the busy timeout. Transact classifies
// them once, so every write path answers alike: 503 storage_unavailable
// with Retry-After, nothing changed; and /readyz reports 503 until a write
// succeeds again (Ready probes one).
var ErrStorageUnavailable = problem.Unavailable("storage_unavailable",
	"Warden cannot write to its storage right now (the disk may be full or failing), so nothing was changed. Try again in a little while.",
	5*time.Second).Titled("Storage unavailable")

var probeFill = strings.Repeat(" ", 64<<10)

// StorageNotAnswering is a read that failed because the storage did not
// answer (a refused or lost connection, a deadline that ran out on the
// database, an I/O error): the same code, title and Retry-After as
// ErrStorageUnavailable, so a client sees one answer for "the database is
// not answering" whichever path noticed it, with message saying what
// could not be done. errors.Is matches ErrStorageUnavailable. Other
// errors come back unchanged; see also DB.NotAnswering.
func (db *DB) StorageNotAnswering(message string, err error) error {
	if !db.NotAnswering(err) {
		return err
	}
	p := ErrStorageUnavailable.Wrap(err)
	p.Message = message
	return p
}

// NotAnswering reports whether err is the storage not answering rather
// than a statement's or the data's fault: what Transact classifies as a
// storage failure, a deadline that ran out while the database was asked,
// or a store already closed (shutting down). A caller that gave up (its
// context cancelled) is not the storage's failure.
func (db *DB) NotAnswering(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	return db.closed.Load() || errors.Is(err, ErrStorageUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		storageFailure(err) || pgStorageFailure(err)
}

// storageFailure reports whether err is SQLite saying the storage, not the
// statement, failed.
func storageFailure(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}

// classify turns a storage failure into ErrStorageUnavailable (keeping the
// cause for logs) and records whether writes work.
func (db *DB) classify(err error) error {
	if err == nil {
		db.writeFailing.Store(false)
		return nil
	}
	var p *problem.Error
	if (storageFailure(err) || pgStorageFailure(err)) && !errors.As(err, &p) {
		db.writeFailing.Store(true)
		return ErrStorageUnavailable.Wrap(err)
	}
	return err
}

// Writable reports whether the last write failed for storage reasons; if
// it did, it probes with a small write and reports that. /readyz asks it,
// so readiness turns 503 while writes fail and recovers by itself once
// they work again, even when no request writes meanwhile.
func (db *DB) Writable(ctx context.Context) error {
	if db.write == nil || !db.writeFailing.Load() {
		return nil
	}
	err := db.Transact(ctx, func(tx *Tx) error {
		// Big enough to need new pages: a write that fits in free space
		// proves little about a disk that is full.
		if _, err := tx.ExecContext(ctx, `INSERT INTO write_probes (at) VALUES (?)`, probeFill); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM write_probes`)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritable, err)
	}
	return nil
}

// FailWrites makes every write fail as storage that went read-only does
// (SQLite's own SQLITE_READONLY, from the real engine), or ends that. It
// is a fault injector for tests and drills (docs/failure-modes.md): the
// write pool has one connection, and the setting is made on it outside
// any transaction, so it holds for every Transact until lifted. On
// PostgreSQL every transaction starts READ ONLY instead, and the server
// refuses its writes (SQLSTATE 25006).
func (db *DB) FailWrites(ctx context.Context, on bool) error {
	if db.write == nil {
		return ErrReadOnly
	}
	if db.dialect == Postgres {
		db.failWrites.Store(on)
		return nil
	}
	v := "0"
	if on {
		v = "1"
	}
	_, err := db.write.ExecContext(ctx, "PRAGMA query_only = "+v)
	return err
}
