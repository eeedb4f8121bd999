package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// Tables lists every table of the schema once, each after the tables its
// foreign keys reference, so a copy in this order satisfies them.
func TestTablesInForeignKeyOrder(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	order, err := db.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(order, "schema_migrations") || !slices.Contains(order, "audit_events") || !slices.Contains(order, "journeys") {
		t.Fatalf("tables = %v", order)
	}
	checked := 0
	for i, table := range order {
		refs, err := store.Strings(ctx, db.Read(), `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range refs {
			if j := slices.Index(order, ref); ref != table && (j < 0 || j > i) {
				t.Errorf("%s (at %d) references %s (at %d): want it listed first", table, i, ref, j)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no foreign keys checked: the schema has some")
	}
}

// A read-only open of PostgreSQL applies no migration and refuses writes.
func TestOpenURLReadOnly(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	u := storetest.URL(t)
	ro, err := store.OpenURL(ctx, u, store.Options{DataDir: t.TempDir(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var tables int
	if err := ro.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("tables after a read-only open = %d, %v; want 0 (no migration)", tables, err)
	}
	if err := store.CheckEmptyTarget(ctx, ro); err != nil {
		t.Errorf("an empty database: %v", err)
	}
	if _, err := ro.Read().ExecContext(ctx, `CREATE TABLE x (id BIGINT)`); err == nil {
		t.Error("a read-only open created a table")
	}
	if err := ro.Transact(ctx, nil); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Transact = %v, want ErrReadOnly", err)
	}
}
