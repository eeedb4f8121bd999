package store

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
)

// Prepared statements, reused.
//
// SQLite compiles every statement it runs (sqlite3_prepare_v2): parsing,
// name resolution and query planning, about a quarter of a request's CPU
// when each statement is compiled again on every call. Warden opens SQLite
// through SQLiteDriver, modernc's driver behind a wrapper that keeps
// each connection's compiled statements by query text: a query that
// connection has run before is bound and stepped again, not compiled
// again. It is per connection (a SQLite statement belongs to the
// connection that compiled it), bounded (stmtCacheSize per connection,
// least recently used out first), and invisible to the domain packages:
// every ExecContext, QueryContext and QueryRowContext of a Tx, of the
// read pool or of a *sql.Conn goes through it, with the same results and
// errors as before. A statement whose result rows are still open is not
// shared: the same query run again meanwhile on that connection (a query
// inside a loop over its own results) is compiled once more for that run
// alone, as before.
//
// PostgreSQL needs no wrapper of this kind: pgx's database/sql driver
// runs every query in QueryExecModeCacheStatement unless the connection
// string says otherwise (default_query_exec_mode), preparing each query
// text once per connection (pgx's statement cache, 512 per connection)
// and executing the prepared statement after. What pgdriver.go adds is
// the rewrite of ? to $n, which is deterministic (the same text in, the
// same text out), so a query's rewritten text is the cache's key every
// time; the rewrite itself is remembered too (rebindCache).
//
// WARDEN_STMT_CACHE=off turns the SQLite cache off (every statement is
// compiled again, as before it existed): a switch for measuring what it
// saves, not a setting to run with.

// SQLiteDriver is the database/sql driver Warden opens SQLite with (and
// the simulated provider its own database): modernc's "sqlite", each
// connection keeping its compiled statements.
const SQLiteDriver = "warden-sqlite"

// stmtCacheSize bounds the statements one SQLite connection keeps
// compiled. Warden's hot paths run a few dozen distinct statements; the
// bound is for queries whose text varies (IN lists of different lengths),
// which would otherwise fill memory.
var stmtCacheSize = 256

// stmtCompiles counts the statements the cache compiled (tests).
var stmtCompiles atomic.Int64

func init() {
	if v := os.Getenv("WARDEN_STMT_CACHE"); v == "off" || v == "0" || v == "false" {
		stmtCacheSize = 0
	}
	// The "sqlite" driver modernc registered; sql.Open connects nothing.
	base, err := sql.Open("sqlite", "")
	if err != nil {
		panic(err)
	}
	inner := base.Driver()
	base.Close()
	sql.Register(SQLiteDriver, &sqliteDriver{inner: inner})
}

type sqliteDriver struct{ inner driver.Driver }

func (d *sqliteDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &sqliteConn{inner: c, stmts: map[string]*list.Element{}}, nil
}

// sqliteConn is one SQLite connection with its compiled statements.
// database/sql uses a connection from one goroutine at a time; mu guards
// the cache all the same (a Rows may be closed from another goroutine).
type sqliteConn struct {
	inner driver.Conn

	mu    sync.Mutex
	stmts map[string]*list.Element // query → element of lru holding a *cachedStmt
	lru   list.List                // most recently used at the front
}

type cachedStmt struct {
	query string
	st    driver.Stmt
	busy  bool // its result rows are open
	once  bool // not in the cache: closed once used
}

// take returns the connection's compiled statement for query, compiling
// it on first use, marked busy; nil when the cache is off or the
// statement is busy (the caller then runs the query uncached).
func (c *sqliteConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	if stmtCacheSize <= 0 {
		return nil, nil
	}
	c.mu.Lock()
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			c.mu.Unlock()
			return nil, nil
		}
		cs.busy = true
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return cs, nil
	}
	c.mu.Unlock()
	st, err := c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	stmtCompiles.Add(1)
	cs := &cachedStmt{query: query, st: st, busy: true}
	c.mu.Lock()
	if _, ok := c.stmts[query]; ok {
		// Compiled meanwhile by another use of the connection (database/sql
		// does not do that): this one serves this run alone.
		c.mu.Unlock()
		return &cachedStmt{query: query, st: st, busy: true, once: true}, nil
	}
	c.stmts[query] = c.lru.PushFront(cs)
	var evict []driver.Stmt
	for e := c.lru.Back(); e != nil && c.lru.Len() > stmtCacheSize; {
		prev := e.Prev()
		if old := e.Value.(*cachedStmt); !old.busy {
			c.lru.Remove(e)
			delete(c.stmts, old.query)
			evict = append(evict, old.st)
		}
		e = prev
	}
	c.mu.Unlock()
	for _, st := range evict {
		_ = st.Close()
	}
	return cs, nil
}

// give marks cs free for the next run.
func (c *sqliteConn) give(cs *cachedStmt) {
	if cs.once {
		_ = cs.st.Close()
		return
	}
	c.mu.Lock()
	cs.busy = false
	c.mu.Unlock()
}

func (c *sqliteConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.inner.(driver.ExecerContext).ExecContext(ctx, query, args)
	}
	defer c.give(cs)
	return cs.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *sqliteConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.inner.(driver.QueryerContext).QueryContext(ctx, query, args)
	}
	r, err := cs.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.give(cs)
		return nil, err
	}
	return &sqliteRows{Rows: r, conn: c, cs: cs}, nil
}

// Close finalizes the connection's statements, then closes it.
func (c *sqliteConn) Close() error {
	c.mu.Lock()
	var sts []driver.Stmt
	for e := c.lru.Front(); e != nil; e = e.Next() {
		sts = append(sts, e.Value.(*cachedStmt).st)
	}
	c.stmts = map[string]*list.Element{}
	c.lru.Init()
	c.mu.Unlock()
	for _, st := range sts {
		_ = st.Close()
	}
	return c.inner.Close()
}

// Prepare and PrepareContext hand out a statement of the caller's own
// (database/sql's *sql.Stmt), outside the cache.
func (c *sqliteConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *sqliteConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *sqliteConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *sqliteConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *sqliteConn) Ping(ctx context.Context) error {
	return c.inner.(driver.Pinger).Ping(ctx)
}

func (c *sqliteConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *sqliteConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// sqliteRows frees its cached statement when closed.
type sqliteRows struct {
	driver.Rows
	conn   *sqliteConn
	cs     *cachedStmt
	closed bool
}

func (r *sqliteRows) Close() error {
	err := r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.conn.give(r.cs)
	}
	return err
}

func (r *sqliteRows) ColumnTypeDatabaseTypeName(i int) string {
	if x, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return x.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *sqliteRows) ColumnTypeLength(i int) (int64, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return x.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *sqliteRows) ColumnTypeNullable(i int) (bool, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return x.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *sqliteRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return x.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *sqliteRows) ColumnTypeScanType(i int) reflect.Type {
	if x, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return x.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

// rebindCache remembers pgdriver.go's rewrite of a query whose arguments
// are all positional: its text then depends on the query and the number
// of arguments alone. Bounded: past rebindCacheSize queries, new ones
// are rewritten on every call, as before.
var rebindCache sync.Map // rebindKey → rebound

const rebindCacheSize = 4096

var rebindCacheLen atomic.Int64

type rebindKey struct {
	query string
	n     int
}

type rebound struct {
	query string
	used  int // arguments the rewritten query takes, in order
}

// rebindCached is rebind, from the cache when every argument is
// positional.
func rebindCached(query string, args []driver.NamedValue) (string, []driver.NamedValue) {
	for _, a := range args {
		if a.Name != "" {
			return rebind(query, args)
		}
	}
	k := rebindKey{query, len(args)}
	if v, ok := rebindCache.Load(k); ok {
		rb := v.(rebound)
		out := args[:rb.used]
		for i := range out {
			out[i].Ordinal = i + 1
		}
		return rb.query, out
	}
	q, out := rebind(query, args)
	if rebindCacheLen.Load() < rebindCacheSize {
		if _, loaded := rebindCache.LoadOrStore(k, rebound{query: q, used: len(out)}); !loaded {
			rebindCacheLen.Add(1)
		}
	}
	return q, out
}
