package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// TestTxStatsCountsCommittedWriteTransactions: every write transaction
// that commits counts once, however many statements it ran; one rolled
// back and reads through the read pool count nothing.
func TestTxStatsCountsCommittedWriteTransactions(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	before := db.TxStats()
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		for _, slug := range []string{"a", "b", "c"} {
			if _, err := tenants.Insert(ctx, tx, slug, slug); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tenants.Insert(ctx, tx, "d", "d"); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Transact = %v, want boom", err)
	}
	if _, err := tenants.BySlug(ctx, db.Read(), "a"); err != nil {
		t.Fatal(err)
	}
	if got := db.TxStats().Sub(before); got != (store.TxStats{Commits: 1}) {
		t.Errorf("TxStats after one committed, one rolled back transaction and a read = %+v, want 1 commit, no conflict", got)
	}
}
