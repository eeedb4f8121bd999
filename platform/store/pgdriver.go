package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// pgDriverName is the database/sql driver Warden opens PostgreSQL with:
// pgx's own stdlib driver behind a thin wrapper that lets domain code keep
// writing SQLite's placeholders. Every statement's ? (and :name, @name or
// $name when the arguments are sql.Named) becomes $1..$n, outside quoted
// strings, quoted identifiers, comments and dollar-quoted bodies; a bool
// argument becomes 0 or 1 (the schema stores flags as integers, as SQLite
// does); a time.Time becomes text in the form SQLite's driver writes.
const pgDriverName = "warden-pgx"

func init() {
	sql.Register(pgDriverName, &pgDriver{inner: stdlib.GetDefaultDriver()})
}

type pgDriver struct{ inner driver.Driver }

func (d *pgDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &pgConn{inner: c, counters: txCountersFor(name)}, nil
}

// OpenConnector makes database/sql open connections with the context of
// the request that needs one. Through Open it cannot: a new connection to
// a server that does not answer (a black-holed network) then waits out
// connect_timeout whatever the caller's deadline, and /readyz took 10 s
// to say 503.
func (d *pgDriver) OpenConnector(name string) (driver.Connector, error) {
	c, err := d.inner.(driver.DriverContext).OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return &pgConnector{inner: c, driver: d, counters: txCountersFor(name)}, nil
}

type pgConnector struct {
	inner    driver.Connector
	driver   *pgDriver
	counters *txCounters // the database's TxStats
}

func (c *pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{inner: conn, counters: c.counters}, nil
}

func (c *pgConnector) Driver() driver.Driver { return c.driver }

// pgConn delegates to pgx's connection, rewriting queries and arguments,
// and counts its database's TxStats.
type pgConn struct {
	inner    driver.Conn
	counters *txCounters
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	q, _ := rebind(query, nil)
	return c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *pgConn) Close() error { return c.inner.Close() }

func (c *pgConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.inner.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil || opts.ReadOnly {
		return tx, err
	}
	return &pgTx{inner: tx, counters: c.counters}, nil
}

// pgTx counts a read-write transaction that commits (TxStats).
type pgTx struct {
	inner    driver.Tx
	counters *txCounters
}

func (t *pgTx) Commit() error {
	if err := t.inner.Commit(); err != nil {
		return t.counters.countConflict(err)
	}
	t.counters.commits.Add(1)
	return nil
}

func (t *pgTx) Rollback() error { return t.inner.Rollback() }

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	q, a := rebindCached(query, args)
	r, err := c.inner.(driver.ExecerContext).ExecContext(ctx, q, a)
	return r, c.counters.countConflict(err)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, a := rebindCached(query, args)
	r, err := c.inner.(driver.QueryerContext).QueryContext(ctx, q, a)
	return r, c.counters.countConflict(err)
}

func (c *pgConn) Ping(ctx context.Context) error {
	return c.inner.(driver.Pinger).Ping(ctx)
}

func (c *pgConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *pgConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue converts what the schema stores differently, then lets
// pgx check the rest.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case bool:
		nv.Value = int64(0)
		if v {
			nv.Value = int64(1)
		}
		return nil
	case time.Time:
		nv.Value = v.Format("2006-01-02 15:04:05.999999999-07:00")
		return nil
	}
	return c.inner.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// rebind rewrites SQLite placeholders to PostgreSQL's and orders args to
// match. A positional ? takes the next unnamed argument; a :name, @name or
// $name takes the argument of that name (the same $k each time it
// appears). Placeholders inside '…', "…", comments and $$…$$ stay as
// they are, and so does a PostgreSQL cast (::type). With no arguments the
// query is left alone.
func rebind(query string, args []driver.NamedValue) (string, []driver.NamedValue) {
	if len(args) == 0 && !strings.Contains(query, "?") {
		return query, args
	}
	named := false
	for _, a := range args {
		if a.Name != "" {
			named = true
			break
		}
	}
	var unnamed []driver.NamedValue
	byName := map[string]driver.NamedValue{}
	for _, a := range args {
		if a.Name == "" {
			unnamed = append(unnamed, a)
		} else {
			byName[a.Name] = a
		}
	}
	var out []driver.NamedValue
	slot := map[string]int{}
	nextUnnamed := 0
	var b strings.Builder
	b.Grow(len(query) + 16)
	add := func(v driver.NamedValue) int {
		v.Name = ""
		v.Ordinal = len(out) + 1
		out = append(out, v)
		return v.Ordinal
	}
	n := len(query)
	for i := 0; i < n; {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(query, i, c)
			b.WriteString(query[i:j])
			i = j
		case c == '-' && i+1 < n && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = n - i
			}
			b.WriteString(query[i : i+j])
			i += j
		case c == '/' && i+1 < n && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			end := n
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end
		case c == '$' && i+1 < n && (query[i+1] == '$' || isIdentStart(query[i+1])) && dollarTag(query, i) != "":
			tag := dollarTag(query, i)
			j := strings.Index(query[i+len(tag):], tag)
			end := n
			if j >= 0 {
				end = i + len(tag) + j + len(tag)
			}
			b.WriteString(query[i:end])
			i = end
		case c == '?':
			if nextUnnamed < len(unnamed) {
				b.WriteString("$" + strconv.Itoa(add(unnamed[nextUnnamed])))
			} else {
				// More placeholders than arguments (or a statement being
				// prepared): number on, and the server checks the count.
				b.WriteString("$" + strconv.Itoa(len(args)+1+nextUnnamed-len(unnamed)))
			}
			nextUnnamed++
			i++
		case named && (c == ':' || c == '@' || c == '$') && i+1 < n && isIdentStart(query[i+1]) &&
			(c != ':' || i == 0 || query[i-1] != ':'):
			j := i + 1
			for j < n && isIdentPart(query[j]) {
				j++
			}
			name := query[i+1 : j]
			v, ok := byName[name]
			if !ok {
				b.WriteString(query[i:j])
				i = j
				continue
			}
			k, seen := slot[name]
			if !seen {
				k = add(v)
				slot[name] = k
			}
			b.WriteString("$" + strconv.Itoa(k))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	if out == nil {
		out = args
	}
	return b.String(), out
}

// skipQuoted returns the index just past the quoted run starting at i
// (a doubled quote inside is part of it).
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// dollarTag returns the dollar-quote opener ($$ or $tag$) at i, or "".
func dollarTag(s string, i int) string {
	j := i + 1
	for j < len(s) && isIdentPart(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '$' && (j == i+1 || !isDigit(s[i+1])) {
		return s[i : j+1]
	}
	return ""
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
