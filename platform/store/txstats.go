package store

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// TxStats counts what the engine did with a database's write
// transactions since the process started: how many committed, and (on
// PostgreSQL) how many statements the server aborted as a deadlock or a
// serialization failure — each one a transaction Transact ran again.
//
// The counts are taken where the engine reports them, below Transact: on
// SQLite by the write connection's commit hook (a transaction that began
// IMMEDIATE counts even when it wrote nothing: it held the writer), on
// PostgreSQL by the driver, for every read-write transaction that
// committed. They are per database, shared by every DB opened on the
// same file or connection string in this process. Tests read them around
// a request to see how many write transactions it took (the request plane
// promises at most two, docs/performance.md) and that no deadlock was
// retried.
type TxStats struct {
	Commits   int64 // write transactions committed
	Conflicts int64 // statements aborted as deadlock (40P01) or serialization failure (40001)
}

// Sub is s minus an earlier reading.
func (s TxStats) Sub(before TxStats) TxStats {
	return TxStats{Commits: s.Commits - before.Commits, Conflicts: s.Conflicts - before.Conflicts}
}

// TxStats reads db's counts (see TxStats).
func (db *DB) TxStats() TxStats {
	c := txCountersFor(db.counterKey())
	return TxStats{Commits: c.commits.Load(), Conflicts: c.conflicts.Load()}
}

func (db *DB) counterKey() string {
	if db.dialect == Postgres {
		return db.dsn
	}
	return db.path
}

type txCounters struct {
	commits   atomic.Int64
	conflicts atomic.Int64
}

var allTxCounters sync.Map // counter key (SQLite path, PostgreSQL DSN) → *txCounters

func txCountersFor(key string) *txCounters {
	if c, ok := allTxCounters.Load(key); ok {
		return c.(*txCounters)
	}
	c, _ := allTxCounters.LoadOrStore(key, &txCounters{})
	return c.(*txCounters)
}

func init() {
	// Every connection of the write pool (dsn with _txlock=immediate)
	// counts its commits. A commit hook runs only for a transaction that
	// took the write lock, so the read pool would count nothing anyway.
	sqlite.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, dsn string) error {
		if !strings.Contains(dsn, "_txlock=immediate") {
			return nil
		}
		h, ok := conn.(sqlite.HookRegisterer)
		if !ok {
			return nil
		}
		path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
		c := txCountersFor(path)
		h.RegisterCommitHook(func() int32 { c.commits.Add(1); return 0 })
		return nil
	})
}

// countConflict counts err when PostgreSQL aborted the statement as a
// deadlock or serialization failure; it returns err.
func (c *txCounters) countConflict(err error) error {
	var pe *pgconn.PgError
	if c != nil && err != nil && errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
		c.conflicts.Add(1)
	}
	return err
}
