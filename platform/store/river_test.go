package store_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// River's schema (durable jobs on PostgreSQL) comes up with Warden's: on
// a fresh database opened by four replicas at once, every River version
// is applied once; SQLite has no River tables.
func TestRiverSchemaMigratesOnceWithWardens(t *testing.T) {
	ctx := context.Background()
	u := storetest.URL(t)
	dir := t.TempDir()
	const n = 4
	dbs := make([]*store.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = store.OpenURL(ctx, u, store.Options{DataDir: dir})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	db := dbs[0]
	if !storetest.Postgres() {
		tables, err := store.TableNames(ctx, db.Read())
		if err != nil || slices.ContainsFunc(tables, func(n string) bool { return strings.HasPrefix(n, "river") }) {
			t.Fatalf("SQLite's tables are %v (%v), want none of River's", tables, err)
		}
		return
	}
	m, err := rivermigrate.New(riverdatabasesql.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := len(m.AllVersions())
	var rows, distinct int
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM river_migration`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != want || distinct != want {
		t.Fatalf("river_migration: %d rows, %d versions; want each of River's %d versions once", rows, distinct, want)
	}
	var jobs int
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job`).Scan(&jobs); err != nil || jobs != 0 {
		t.Fatalf("river_job: %d rows, %v; want an empty table", jobs, err)
	}
}
