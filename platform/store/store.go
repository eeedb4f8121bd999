// Package store owns Warden's database: connection setup, embedded
// migrations and the transaction helper every writer uses. SQLite is the
// default; OpenURL with a postgres:// URL opens PostgreSQL instead
// (postgres.go, pgdriver.go), behind the same functions.
//
// There are two pools over one file. The write pool holds a single
// connection and starts every transaction with BEGIN IMMEDIATE, so a
// read-then-write transaction waits for the write lock instead of failing
// with SQLITE_BUSY halfway. The read pool serves concurrent readers (WAL).
// Write transactions that run at the same time share one SQLite
// transaction and one commit (group commit, groupcommit.go).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wardenhq/warden/platform/problem"
)

// ErrNotFound is returned by lookups that match no row. It is a problem
// of kind NotFound (a 404 wherever it reaches a response); a domain gives
// its own sentence with a problem.NotFound of code "not_found", which
// errors.Is still matches against ErrNotFound (problem.Error.Is compares
// kind and code), so optional loads test one value everywhere.
var ErrNotFound = problem.NotFound("not_found", "What you asked for was not found: it does not exist, or it was removed.")

// DB is the opened database with its read and write pools.
type DB struct {
	path  string
	write *sql.DB // nil when opened read-only
	read  *sql.DB
	// writeFailing is set when a write failed for storage reasons and
	// cleared by the next write that commits (classify, Writable).
	writeFailing atomic.Bool
	dialect      Dialect
	// dsn is the PostgreSQL connection string (PostgresDSN).
	dsn string
	// failWrites makes every PostgreSQL transaction read-only (FailWrites).
	failWrites atomic.Bool
	// closed is set by Close: a read that fails afterwards failed because
	// the store is gone (NotAnswering).
	closed atomic.Bool
	// gc batches concurrent SQLite write transactions into one commit
	// (groupcommit.go); ungrouped turns it off, for benchmarks.
	gc        groupCommit
	ungrouped bool
}

// ErrReadOnly is returned by Transact on a database opened with
// OpenReadOnly.
var ErrReadOnly = errors.New("database opened read-only")

// dsn builds the connection string. busy_timeout must come before
// journal_mode so that switching to WAL waits for a concurrent opener.
func dsn(path string, txlock string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", txlock)
	q.Set("_time_format", "sqlite")
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed, with mode 0600) the database file at path
// and applies every pending migration.
func Open(ctx context.Context, path string) (*DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database file: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("restrict database file: %w", err)
	}

	write, err := sql.Open(SQLiteDriver, dsn(path, "immediate"))
	if err != nil {
		return nil, fmt.Errorf("open write pool: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)

	read, err := sql.Open(SQLiteDriver, dsn(path, "deferred"))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open read pool: %w", err)
	}
	n := max(4, runtime.NumCPU()*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)

	db := &DB{path: path, write: write, read: read}
	if err := db.connect(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database %s: %w", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// connect makes the write pool's first connection. Its journal_mode(WAL)
// pragma needs the file's exclusive lock for a moment; when several
// processes open a fresh file at once, SQLite can answer SQLITE_BUSY at
// once instead of calling the busy handler (it would deadlock otherwise),
// so connect tries again, for as long as the busy timeout, before it
// gives up.
func (db *DB) connect(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := db.write.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// OpenReadOnly opens the existing database file at path for reading only,
// for tools that inspect a database without being its server, such as
// `warden audit verify` on a copy. It creates nothing, changes no file
// mode, applies no migration and refuses every write (query_only).
//
// A database in WAL mode normally needs its -shm file, which SQLite creates
// next to the database when it is missing. In a directory this process
// cannot write, with no write-ahead log beside the file (a copy, or a
// database whose server closed cleanly), the file is opened as immutable
// instead: all its content is in the file itself.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open database read-only: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open database read-only: %s is not a file", path)
	}
	read, err := openReadOnly(ctx, path, false)
	if err != nil && !walPending(path) {
		if r, err2 := openReadOnly(ctx, path, true); err2 == nil {
			read, err = r, nil
		}
	}
	if err != nil && walPending(path) {
		return nil, fmt.Errorf("open database %s read-only: %w (its write-ahead log %s-wal needs a directory SQLite can write its -shm file in; "+
			"copy the database with sqlite3's .backup command instead)", path, err, filepath.Base(path))
	}
	if err != nil {
		return nil, fmt.Errorf("open database %s read-only: %w", path, err)
	}
	return &DB{path: path, read: read}, nil
}

func openReadOnly(ctx context.Context, path string, immutable bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Set("_time_format", "sqlite")
	read, err := sql.Open(SQLiteDriver, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	n := max(4, runtime.NumCPU()*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	// Reading the schema opens the write-ahead log when there is one,
	// which is where a read-only directory makes the open fail.
	var tables int
	if err := read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		read.Close()
		return nil, err
	}
	return read, nil
}

// walPending reports whether path has a non-empty write-ahead log beside
// it, holding commits that are not in the database file yet.
func walPending(path string) bool {
	st, err := os.Stat(path + "-wal")
	return err == nil && st.Size() > 0
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Read is the pool for queries that do not write.
func (db *DB) Read() *sql.DB { return db.read }

// Close closes both pools.
func (db *DB) Close() error {
	db.closed.Store(true)
	if db.write == nil {
		return db.read.Close()
	}
	return errors.Join(db.read.Close(), db.write.Close())
}

// Tx is a write transaction Transact began: the *sql.Tx, for queries
// and for code that needs the raw handle (River's InsertTx takes tx.Tx),
// and the engine it talks to.
//
// The function Transact hands a Tx to may run more than once (see
// Transact): on PostgreSQL a deadlock or serialization failure rolls the
// transaction back and runs the function again on a new Tx. Nothing it
// does outside the transaction may assume it runs once.
type Tx struct {
	*sql.Tx
	dialect Dialect
}

// Dialect is the engine tx talks to.
func (tx *Tx) Dialect() Dialect { return tx.dialect }

// NewTx is the handle of a transaction begun outside Transact (a
// read-only one, one on a database of its own), on engine d. It is run
// once, by its caller; nothing retries it.
func NewTx(raw *sql.Tx, d Dialect) *Tx { return &Tx{Tx: raw, dialect: d} }

// Querier is what both *sql.DB and *sql.Tx offer for reads.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Transact runs fn in one write transaction (BEGIN IMMEDIATE on SQLite).
// It commits when fn returns nil and rolls back when fn returns an error
// or panics; a panic is re-raised after the rollback.
//
// On PostgreSQL the transaction is READ COMMITTED, not single-writer: the
// domain's writes that race are written to be exact there too (a
// conditional UPDATE for budgets, a compare-and-set on status for
// approvals, unique keys with ON CONFLICT for idempotency and the ledger,
// Serialize for the audit chain). A transaction PostgreSQL aborts as a
// deadlock or serialization failure is run again, up to maxTxAttempts
// times.
//
// On SQLite, transactions that run at the same time are committed
// together (group commit, groupcommit.go): fn runs in a savepoint of a
// transaction it shares with other callers, its writes are undone alone
// when it fails, and Transact returns only once the shared transaction
// committed, so a nil return still means fn's writes are durable. fn
// sees the writes of callers before it in the batch, as it would have
// seen them committed.
//
// So fn may run more than once: on PostgreSQL a deadlock or
// serialization failure runs it again in a fresh transaction, and on
// SQLite a shared transaction that failed as a whole (a neighbour's write
// interrupted by its cancelled context, a failed commit) runs it again
// in a transaction of its own, without telling fn or the caller. It must not change anything outside
// the transaction until Transact returns nil: no appends to a caller's
// slice, no counters, no log lines, no calls out. A variable it sets for
// its caller is reset at its start (a later run may not reach the
// assignment), or only read once Transact returned nil.
func (db *DB) Transact(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if db.write == nil {
		return ErrReadOnly
	}
	// A write that failed because of the storage (disk full, I/O error)
	// becomes ErrStorageUnavailable, whatever the caller wrapped around
	// it: every write path answers 503 with Retry-After.
	defer func() { err = db.classify(err) }()
	if db.dialect == SQLite && !db.ungrouped {
		return db.transactGrouped(ctx, fn, false)
	}
	for attempt := 1; ; attempt++ {
		err = db.transact(ctx, fn)
		if db.dialect != Postgres || attempt == maxTxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		// Apart, so the transactions that deadlocked do not meet again
		// in the same order: up to attempt × 5 ms, at random.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(rand.Int64N(int64(attempt) * int64(5*time.Millisecond)))):
		}
	}
}

// TransactAlone is Transact for a function that must not share its
// transaction with other callers' (group commit on SQLite): a migration,
// or work long enough that it would hold up the commit of the requests
// batched with it. It waits for the batch in progress to commit and runs
// in a transaction of its own. On PostgreSQL it is Transact.
func (db *DB) TransactAlone(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if db.write == nil || db.dialect != SQLite || db.ungrouped {
		return db.Transact(ctx, fn)
	}
	defer func() { err = db.classify(err) }()
	return db.transactGrouped(ctx, fn, true)
}

// maxTxAttempts bounds how often Transact runs a transaction PostgreSQL
// aborted as a deadlock or serialization failure. Under a burst of
// concurrent decisions on one tenant (hundreds at once), three attempts
// were seen to run out.
const maxTxAttempts = 10

func (db *DB) transact(ctx context.Context, fn func(tx *Tx) error) (err error) {
	var opts *sql.TxOptions
	if db.dialect == Postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	raw, err := db.write.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{Tx: raw, dialect: db.dialect}
	returned := false
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		// !returned: fn called runtime.Goexit (t.FailNow in a test);
		// the connection must not stay in an open transaction.
		if err != nil || !returned {
			_ = tx.Rollback()
		}
	}()
	if db.dialect == Postgres && db.failWrites.Load() {
		// As SQLite's query_only refuses BEGIN IMMEDIATE, the server
		// refuses the transaction's first write, before fn runs.
		if _, err = tx.ExecContext(ctx, `SET TRANSACTION READ ONLY`); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM write_probes`); err != nil {
			return err
		}
	}
	err = fn(tx)
	returned = true
	if err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// The readiness checks, as Ready's errors name them (errors.Is): the
// database answers a read, every migration is applied, writes work.
var (
	ErrNotReachable      = errors.New("database not reachable")
	ErrMigrationsPending = errors.New("migrations pending")
	ErrNotWritable       = errors.New("storage not writable")
)

// Ready reports whether the database answers and every embedded migration
// has been applied. It is what /readyz asks, under a deadline of its own:
// every check honours ctx, a new connection included.
func (db *DB) Ready(ctx context.Context) error {
	applied, err := db.appliedVersion(ctx, db.read)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotReachable, err)
	}
	if want := latestVersion(db.dialect); applied < want {
		return fmt.Errorf("%w: at %d, want %d", ErrMigrationsPending, applied, want)
	}
	return db.Writable(ctx)
}

// SchemaVersion is the newest applied migration.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	return db.appliedVersion(ctx, db.read)
}

// Strings runs a query that selects one text column and returns its values
// in order.
func Strings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
