package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

type helperRow struct {
	N int
	S string
}

func scanHelperRow(s store.Scanner) (helperRow, error) {
	var r helperRow
	err := s.Scan(&r.N, &r.S)
	return r, err
}

// helperRows is a database with a table of three rows, on the engine the
// environment chooses (storetest.Open).
func helperRows(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		if _, err := tx.ExecContext(context.Background(), `CREATE TABLE helper_rows (n INTEGER NOT NULL, s TEXT NOT NULL)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(context.Background(), `INSERT INTO helper_rows (n, s) VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestQueryScansEveryRow(t *testing.T) {
	db := helperRows(t)
	ctx := context.Background()
	got, err := store.Query(ctx, db.Read(), scanHelperRow, `SELECT n, s FROM helper_rows WHERE n >= ? ORDER BY n`, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []helperRow{{2, "b"}, {3, "c"}}; !slices.Equal(got, want) {
		t.Errorf("Query = %v, want %v", got, want)
	}
	none, err := store.Query(ctx, db.Read(), scanHelperRow, `SELECT n, s FROM helper_rows WHERE n > ?`, 9)
	if err != nil || len(none) != 0 {
		t.Errorf("Query with no rows = %v, %v; want none, nil", none, err)
	}
	// In a transaction too, and a scan's error ends the query.
	boom := errors.New("boom")
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, err := store.Query(ctx, tx, func(s store.Scanner) (helperRow, error) {
			r, err := scanHelperRow(s)
			if err == nil && r.N == 2 {
				err = boom
			}
			return r, err
		}, `SELECT n, s FROM helper_rows ORDER BY n`)
		return err
	})
	if !errors.Is(err, boom) {
		t.Errorf("Query with a failing scan = %v, want %v", err, boom)
	}
	if _, err := store.Query(ctx, db.Read(), scanHelperRow, `SELECT n, s FROM no_such_table`); err == nil {
		t.Error("Query on a missing table: no error")
	}
}

func TestGetIsNotFoundWithoutARow(t *testing.T) {
	db := helperRows(t)
	ctx := context.Background()
	got, err := store.Get(ctx, db.Read(), scanHelperRow, `SELECT n, s FROM helper_rows WHERE n = ?`, 2)
	if err != nil || got != (helperRow{2, "b"}) {
		t.Errorf("Get = %v, %v; want {2 b}, nil", got, err)
	}
	got, err = store.Get(ctx, db.Read(), scanHelperRow, `SELECT n, s FROM helper_rows WHERE n = ?`, 9)
	if !errors.Is(err, store.ErrNotFound) || got != (helperRow{}) {
		t.Errorf("Get without a row = %v, %v; want the zero row, %v", got, err, store.ErrNotFound)
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, err := store.Get(ctx, tx, scanHelperRow, `SELECT n, s FROM helper_rows WHERE n = ?`, 9)
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get without a row in a transaction = %v, want %v", err, store.ErrNotFound)
	}
	if _, err := store.Get(ctx, db.Read(), scanHelperRow, `SELECT n, s FROM no_such_table`); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get on a missing table = %v, want an error other than not found", err)
	}
}
