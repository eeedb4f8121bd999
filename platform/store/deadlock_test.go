package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// TestTransactRunsADeadlockedTransactionAgain (PostgreSQL): two
// transactions lock two tenants in opposite orders, each waiting for the
// other; the server aborts one as a deadlock, Transact runs it again, and
// both commit.
func TestTransactRunsADeadlockedTransactionAgain(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("SQLite has one writer at a time: set " + storetest.EnvPostgres)
	}
	db := storetest.Open(t)
	ctx := context.Background()
	for _, slug := range []string{"a", "b"} {
		if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, slug, slug); return err }); err != nil {
			t.Fatal(err)
		}
	}
	before := db.TxStats()
	var runs atomic.Int32
	var locked sync.WaitGroup // both hold their first row before either asks for its second
	locked.Add(2)
	lockBoth := func(first, second string) error {
		firstRun := true
		return db.Transact(ctx, func(tx *store.Tx) error {
			runs.Add(1)
			if _, err := tx.ExecContext(ctx, `UPDATE tenants SET name = name WHERE slug = ?`, first); err != nil {
				return err
			}
			if firstRun {
				firstRun = false
				locked.Done()
				locked.Wait()
			}
			_, err := tx.ExecContext(ctx, `UPDATE tenants SET name = name WHERE slug = ?`, second)
			return err
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = lockBoth(order[0], order[1]) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("transaction %d: %v; want it run again after the deadlock and committed", i, err)
		}
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("%d runs, want 3 (the deadlock's victim once more)", n)
	}
	if got := db.TxStats().Sub(before); got.Conflicts != 1 || got.Commits != 2 {
		t.Errorf("TxStats = %+v, want 1 conflict (the deadlock) and 2 commits", got)
	}
}
