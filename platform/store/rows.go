package store

import (
	"context"
	"database/sql"
	"errors"
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
