package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A statement run again on the same connection is not compiled again:
// the second and later transactions running the same queries compile
// nothing, and their results are those of the first.
func TestSQLiteStatementsCompiledOncePerConnection(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	if err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE stmt_t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	run := func(i int) {
		t.Helper()
		err := db.Transact(ctx, func(tx *Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO stmt_t (id, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM stmt_t WHERE id <= ?`, i).Scan(&n); err != nil {
				return err
			}
			if n != i {
				return fmt.Errorf("count %d, want %d", n, i)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	start := stmtCompiles.Load()
	run(1)
	before := stmtCompiles.Load()
	if before-start < 2 {
		t.Fatalf("the first transaction compiled %d statements into the cache, want its 2", before-start)
	}
	for i := 2; i <= 50; i++ {
		run(i)
	}
	if got := stmtCompiles.Load() - before; got != 0 {
		t.Errorf("49 more transactions compiled %d statements, want 0 (each compiled once, by the first)", got)
	}
	// A violated constraint fails as before and leaves the statement usable.
	err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO stmt_t (id, v) VALUES (?, ?)`, 1, "again")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("duplicate insert: %v, want a UNIQUE constraint failure", err)
	}
	run(51)
}

// A query run again while its own result rows are still open (a query
// inside a loop over its results) gets a statement of its own: both
// result sets come out whole.
func TestSQLiteSameQueryNestedInItsOwnRows(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE nest_t (id INTEGER PRIMARY KEY)`); err != nil {
			return err
		}
		for i := 1; i <= 3; i++ {
			if _, err := tx.ExecContext(ctx, `INSERT INTO nest_t (id) VALUES (?)`, i); err != nil {
				return err
			}
		}
		const q = `SELECT id FROM nest_t WHERE id >= ? ORDER BY id`
		rows, err := tx.QueryContext(ctx, q, 1)
		if err != nil {
			return err
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var id int
			if err := rows.Scan(&id); err != nil {
				return err
			}
			inner, err := Strings(ctx, tx, q, id)
			if err != nil {
				return err
			}
			got = append(got, fmt.Sprint(id, inner))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if want := "1 [1 2 3]|2 [2 3]|3 [3]"; strings.Join(got, "|") != want {
			return fmt.Errorf("got %q, want %q", strings.Join(got, "|"), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Past its bound a connection's cache drops its least recently used
// statements; every query still answers, and the schema changing under a
// compiled statement (a migration) is seen.
func TestSQLiteStatementCacheBoundAndSchemaChange(t *testing.T) {
	old := stmtCacheSize
	stmtCacheSize = 4
	t.Cleanup(func() { stmtCacheSize = old })
	db, _ := openTemp(t)
	ctx := context.Background()
	conn, err := db.Read().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 20 {
		var n int
		if err := conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d + ?`, i), 1).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	var cached int
	_ = conn.Raw(func(c any) error {
		sc := c.(*sqliteConn)
		sc.mu.Lock()
		cached = sc.lru.Len()
		sc.mu.Unlock()
		return nil
	})
	if cached > 4 {
		t.Errorf("the connection keeps %d statements, want at most 4", cached)
	}

	if err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE grow_t (a INTEGER)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT * FROM grow_t`
	cols := func() []string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, _ := rows.Columns()
		return c
	}
	if got := cols(); len(got) != 1 {
		t.Fatalf("columns %v, want [a]", got)
	}
	if err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `ALTER TABLE grow_t ADD COLUMN b TEXT`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := cols(); len(got) != 2 {
		t.Errorf("after ALTER TABLE the cached query has columns %v, want [a b]", got)
	}
}

// A script of several statements still runs whole, and a cancelled
// context still ends a cached statement's run with the context's error.
func TestSQLiteCachedScriptAndCancel(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	script := `CREATE TABLE s1 (a INTEGER); CREATE TABLE s2 (a INTEGER); INSERT INTO s2 VALUES (7)`
	if err := db.Transact(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, script)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.Read().QueryRowContext(ctx, `SELECT a FROM s2`).Scan(&v); err != nil || v != 7 {
		t.Fatalf("after the script: %d, %v", v, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err := db.Read().QueryRowContext(cctx, `SELECT a FROM s2`).Scan(&v)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled query: %v, want context.Canceled", err)
	}
	if err := db.Read().QueryRowContext(ctx, `SELECT a FROM s2`).Scan(&v); err != nil || v != 7 {
		t.Errorf("after a cancelled run: %d, %v", v, err)
	}
}

// On PostgreSQL pgx prepares each query once per connection and executes
// the prepared statement after (QueryExecModeCacheStatement): the
// rewritten text of a query run many times on one connection is one
// prepared statement of that session.
func TestPostgresStatementsPreparedOncePerConnection(t *testing.T) {
	if os.Getenv("WARDEN_TEST_POSTGRES") == "" {
		t.Skip("PostgreSQL only: set WARDEN_TEST_POSTGRES")
	}
	db, _ := openAny(t)
	ctx := context.Background()
	conn, err := db.Read().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const q = `SELECT ? + 1 AS stmt_cache_probe`
	for i := range 20 {
		var n int
		if err := conn.QueryRowContext(ctx, q, i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("run %d: %d, %v", i, n, err)
		}
	}
	var prepared, calls int
	err = conn.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(generic_plans + custom_plans), 0) FROM pg_prepared_statements
		WHERE statement LIKE '%stmt_cache_probe%' AND statement NOT LIKE '%pg_prepared_statements%'`).Scan(&prepared, &calls)
	if err != nil {
		t.Fatal(err)
	}
	if prepared != 1 {
		t.Errorf("the query is prepared %d times on the connection, want once", prepared)
	}
	if calls < 20 {
		t.Errorf("the prepared statement ran %d times, want 20", calls)
	}
}

// The remembered rewrite is the rewrite: same text, same arguments in
// order, for queries with more or fewer arguments than placeholders too.
func TestRebindCachedMatchesRebind(t *testing.T) {
	for _, q := range []string{`SELECT ? , '?', ?`, `SELECT 1`, `UPDATE t SET a = ? WHERE b = ? AND c = ?`} {
		for n := range 4 {
			for range 2 { // the second time from the cache
				args := posArgs(n)
				wq, wa := rebind(q, posArgs(n))
				gq, ga := rebindCached(q, args)
				if gq != wq || fmt.Sprint(ga) != fmt.Sprint(wa) {
					t.Errorf("rebindCached(%q, %d args) = %q %v, want %q %v", q, n, gq, ga, wq, wa)
				}
			}
		}
	}
}

func posArgs(n int) []driver.NamedValue {
	out := make([]driver.NamedValue, n)
	for i := range out {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: int64(i * 10)}
	}
	return out
}
