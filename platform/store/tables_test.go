package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// TableNames and TableExists answer alike on both engines, from a pool, a
// connection and a transaction, each of which knows its engine.
func TestTableNamesAndTableExistsOnBothEngines(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	want := store.SQLite
	if storetest.Postgres() {
		want = store.Postgres
	}
	conn, err := db.Read().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	check := func(name string, q store.Querier) {
		t.Helper()
		if d := store.DialectOf(q); d != want {
			t.Errorf("%s: DialectOf = %v, want %v", name, d, want)
		}
		names, err := store.TableNames(ctx, q)
		if err != nil {
			t.Fatalf("%s: TableNames: %v", name, err)
		}
		for _, n := range []string{"audit_events", "tenants", "schema_migrations"} {
			if !slices.Contains(names, n) {
				t.Errorf("%s: TableNames = %v, want %s among them", name, names, n)
			}
		}
		if slices.Contains(names, "sqlite_schema") || slices.Contains(names, "sqlite_sequence") {
			t.Errorf("%s: TableNames = %v, lists the engine's own", name, names)
		}
		for table, exists := range map[string]bool{"audit_checkpoints": true, "no_such_table": false, "sqlite_schema": false} {
			if ok, err := store.TableExists(ctx, q, table); err != nil || ok != exists {
				t.Errorf("%s: TableExists(%s) = %v, %v; want %v", name, table, ok, err, exists)
			}
		}
	}
	check("pool", db.Read())
	check("connection", conn)
	if d := store.DialectOf(db); d != want {
		t.Errorf("DialectOf(db) = %v, want %v", d, want)
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		check("transaction", tx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
