package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Dialect is the SQL engine behind a DB.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// Options are the PostgreSQL settings (SQLite has none of them).
type Options struct {
	// DataDir is where files that stay per installation live beside the
	// database (the audit signing key); Path() is a name inside it.
	DataDir string
	// MaxConns caps the connection pool (default DefaultMaxConns).
	MaxConns int
	// StatementTimeout cancels a statement that runs longer on the server
	// (0: the server's setting).
	StatementTimeout time.Duration
	// ConnectTimeout bounds establishing one connection (default 10 s).
	ConnectTimeout time.Duration
	// ReadOnly opens for reading only, for tools that inspect a database
	// without serving it (warden audit verify): no migration is applied,
	// Transact refuses, and on PostgreSQL every session is read-only
	// (default_transaction_read_only); SQLite opens as OpenReadOnly does.
	ReadOnly bool
}

// DefaultMaxConns is the PostgreSQL pool size when Options.MaxConns is 0.
const DefaultMaxConns = 20

// IsPostgresURL reports whether u names a PostgreSQL server.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// OpenURL opens the database a URL names: postgres:// (or postgresql://)
// a PostgreSQL server, with o's settings; sqlite:PATH, or a plain path, a
// SQLite file as Open does. It applies every pending migration.
func OpenURL(ctx context.Context, rawURL string, o Options) (*DB, error) {
	if !IsPostgresURL(rawURL) {
		if o.ReadOnly {
			return OpenReadOnly(ctx, strings.TrimPrefix(rawURL, "sqlite:"))
		}
		return Open(ctx, strings.TrimPrefix(rawURL, "sqlite:"))
	}
	dsn, name, err := postgresDSN(rawURL, o)
	if err != nil {
		return nil, err
	}
	pool, err := sql.Open(pgDriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres pool: %w", err)
	}
	n := o.MaxConns
	if n <= 0 {
		n = DefaultMaxConns
	}
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	db := &DB{path: filepath.Join(o.DataDir, "postgres:"+name), write: pool, read: pool, dialect: Postgres, dsn: dsn}
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres database %s: %w", name, err)
	}
	if o.ReadOnly {
		db.write = nil
		return db, nil
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// postgresDSN adds the connect and statement timeouts to the URL, and
// returns the database name for messages.
func postgresDSN(rawURL string, o Options) (dsn, name string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", fmt.Errorf("WARDEN_DATABASE_URL is not a URL: %w", errors.Unwrap(err))
	}
	q := u.Query()
	ct := o.ConnectTimeout
	if ct <= 0 {
		ct = 10 * time.Second
	}
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", strconv.Itoa(max(1, int(ct.Round(time.Second)/time.Second))))
	}
	if o.StatementTimeout > 0 && q.Get("statement_timeout") == "" {
		q.Set("statement_timeout", strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10))
	}
	if o.ReadOnly {
		q.Set("default_transaction_read_only", "on")
	}
	if q.Get("application_name") == "" {
		q.Set("application_name", "warden")
	}
	u.RawQuery = q.Encode()
	name = strings.TrimPrefix(u.Path, "/")
	if name == "" {
		name = u.User.Username()
	}
	if sp := q.Get("search_path"); sp != "" {
		name += "." + sp
	}
	return u.String(), name, nil
}

// Dialect is the engine behind db.
func (db *DB) Dialect() Dialect { return db.dialect }

// PostgresDSN is the connection string of a PostgreSQL database, settings
// included, for a pool of its own (River's job workers, platform/jobs); it
// is empty on SQLite.
func (db *DB) PostgresDSN() string { return db.dsn }

// Serialize makes tx the only transaction past this point for name until
// it ends. On SQLite it does nothing: BEGIN IMMEDIATE already admits one
// writer at a time. On PostgreSQL it takes a transaction-scoped advisory
// lock (pg_advisory_xact_lock), released by commit or rollback, so
// replicas queue here; a read after it sees every transaction that held
// the lock before (READ COMMITTED takes a new snapshot per statement).
func Serialize(ctx context.Context, tx *Tx, name string) error {
	if tx.Dialect() != Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, name); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	return nil
}

// SerializeKey is Serialize for one key of many in a space (one target
// among a tenant's, say): transactions on the same space and name queue,
// others pass. The lock is PostgreSQL's two-key advisory lock, the key
// space of LockKey, so a key never meets Serialize's single-key locks
// (the audit chain's) however its name hashes.
func SerializeKey(ctx context.Context, tx *Tx, space, name string) error {
	if tx.Dialect() != Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))`, space, name); err != nil {
		return fmt.Errorf("lock %s: %w", space, err)
	}
	return nil
}

// pgStorageFailure reports whether err is PostgreSQL (or the way to it)
// failing rather than the statement: a lost or refused connection, the
// server shutting down or out of disk or memory, a read-only transaction
// (FailWrites, or a standby), a lock or statement timeout.
func pgStorageFailure(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			strings.HasPrefix(pe.Code, "53"),                           // insufficient resources: disk full, out of memory, too many connections
			strings.HasPrefix(pe.Code, "58"),                           // system error: I/O
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutting down, cannot connect now
			pe.Code == "25006", // read-only transaction
			pe.Code == "55P03", // lock not available
			pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout"):
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || pgconn.Timeout(err)
}

// retryable reports whether PostgreSQL aborted the transaction so that
// running it again may succeed (serialization failure, deadlock).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// IsUniqueViolation reports whether err is an insert or update refused by
// the unique (or primary key) constraint on table's column, on either
// engine: SQLite says "UNIQUE constraint failed: table.column",
// PostgreSQL answers SQLSTATE 23505 naming the table and, in its detail,
// the key's column.
func IsUniqueViolation(err error, table, column string) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505" && pe.TableName == table && strings.HasPrefix(pe.Detail, "Key ("+column+")=")
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed: "+table+"."+column)
}
