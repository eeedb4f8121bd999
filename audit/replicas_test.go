package audit_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// Appends race from two handles on one database, as from two replicas:
// every append succeeds, seq runs 1..n with no gap and the chain verifies.
// On PostgreSQL (WARDEN_TEST_POSTGRES) the handles are separate pools
// that only the chain's advisory lock keeps in line.
func TestAppendFromTwoReplicasIsGapFree(t *testing.T) {
	const n = 120
	ctx := context.Background()
	u, dir := storetest.URL(t), t.TempDir()
	var dbs [2]*store.DB
	for i := range dbs {
		db, err := store.OpenURL(ctx, u, store.Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	storetest.NoConflicts(t, dbs[0])
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- dbs[i%2].Transact(ctx, func(tx *store.Tx) error {
				// A read first, as domain transactions do before they
				// append: the head must still be read after the lock.
				var x int
				if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&x); err != nil {
					return err
				}
				_, err := audit.Append(ctx, tx, sampleEvent(i))
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Append: %v", err)
		}
	}
	rows := readRows(t, dbs[1].Read())
	for i, r := range rows {
		if r.Seq != int64(i+1) {
			t.Fatalf("row %d has seq %d, want %d", i, r.Seq, i+1)
		}
	}
	if len(rows) != n {
		t.Errorf("%d events, want %d", len(rows), n)
	}
	if head, err := audit.Verify(ctx, dbs[0].Read(), nil); err != nil || head.Seq != n {
		t.Errorf("Verify = %v, %v; want head at seq %d", head, err, n)
	}
}
