package store

import (
	"context"
	"database/sql"
	"fmt"
)

// DialectOf is the engine q talks to: a *DB, a pool it hands out
// (*sql.DB), a connection from one (*sql.Conn), or a transaction
// Transact began (*Tx). A bare *sql.Tx cannot say, and is taken for
// SQLite; a query written for SQLite then fails on PostgreSQL, loudly.
func DialectOf(q any) Dialect {
	switch x := q.(type) {
	case interface{ Dialect() Dialect }:
		return x.Dialect()
	case *sql.DB:
		if _, ok := x.Driver().(*pgDriver); ok {
			return Postgres
		}
	case *sql.Conn:
		d := SQLite
		_ = x.Raw(func(c any) error {
			if _, ok := c.(*pgConn); ok {
				d = Postgres
			}
			return nil
		})
		return d
	}
	return SQLite
}

// TableNames lists the tables of the schema q works in, by name: on
// SQLite those of the file (SQLite's own sqlite_* aside), on PostgreSQL
// the base tables of the current schema (River's among them).
func TableNames(ctx context.Context, q Querier) ([]string, error) {
	query := `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	if DialectOf(q) == Postgres {
		query = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	names, err := Strings(ctx, q, query)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return names, nil
}

// TableExists reports whether the schema q works in has a table of that
// name, as TableNames would list it: for readers of a database that may
// predate a migration, such as `warden audit verify` on an old copy.
func TableExists(ctx context.Context, q Querier, name string) (bool, error) {
	query := `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?)`
	if DialectOf(q) == Postgres {
		query = `SELECT EXISTS (SELECT 1 FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name = ?)`
	}
	var ok bool
	if err := q.QueryRowContext(ctx, query, name).Scan(&ok); err != nil {
		return false, fmt.Errorf("look for table %s: %w", name, err)
	}
	return ok, nil
}
