package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// Scanner is a row to scan: a *sql.Row or the current row of *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Query runs query on q and scans every row it returns with scan. It
// closes the rows and reports the error that ended them (rows.Err), so
// a caller only writes the scan of one row.
func Query[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Get runs query on q and scans the one row it returns with scan. No row
// is ErrNotFound, as it is (the optional load: callers test it with
// errors.Is); any other error comes back with T's zero value.
func Get[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args ...any) (T, error) {
	v, err := scan(q.QueryRowContext(ctx, query, args...))
	if err != nil {
		var zero T
		if errors.Is(err, sql.ErrNoRows) {
			return zero, ErrNotFound
		}
		return zero, err
	}
	return v, nil
}

// maxInList is how many values one IN list of InChunks holds at most
// (well under SQLite's and PostgreSQL's limits on parameters).
const maxInList = 500

// InChunks calls f with each run of at most 500 of ids as the
// placeholders of an IN list ("?, ?, ?") and their arguments, so a
// lookup of many rows by id is one query per 500 ids:
//
//	store.InChunks(ids, func(in string, args []any) error {
//		names, err := store.Query(ctx, q, scan, `SELECT id, name FROM t WHERE id IN (`+in+`)`, args...)
//		...
//	})
func InChunks(ids []string, f func(in string, args []any) error) error {
	for len(ids) > 0 {
		n := min(len(ids), maxInList)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		if err := f("?"+strings.Repeat(", ?", n-1), args); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}
