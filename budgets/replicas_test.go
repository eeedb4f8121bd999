package budgets

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// 400 reservations race over two handles on one database, as two replicas
// would: exactly the ones that fit are admitted, every other one is
// refused as exhausted (the API's 402), and nothing is overspent. On
// PostgreSQL (WARDEN_TEST_POSTGRES) the handles are two connection pools
// whose transactions really interleave.
func TestFourHundredWayRaceOverTwoHandlesAdmitsExactlyWhatFits(t *testing.T) {
	const (
		each    = 1_000
		fits    = 150
		callers = 400
	)
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
	var tenant tenants.Tenant
	err := dbs[0].Transact(ctx, func(tx *store.Tx) error {
		var err error
		if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		return Set(ctx, tx, Spec{TenantID: tenant.ID, Period: Month, LimitMicros: fits * each, AlertPercent: 80}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range callers {
		wg.Go(func() {
			err := reserve(dbs[i%2], tenant.ID, each, time.Now())
			switch {
			case err == nil:
				admitted.Add(1)
			case errors.Is(err, ErrExhausted):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b, err := Get(ctx, dbs[1].Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if admitted.Load() != fits || refused.Load() != callers-fits {
		t.Errorf("admitted %d, refused %d; want %d and %d", admitted.Load(), refused.Load(), fits, callers-fits)
	}
	if b.ReservedMicros != fits*each || b.SpentMicros+b.ReservedMicros > b.LimitMicros {
		t.Errorf("reserved %d spent %d limit %d; want exactly the limit reserved", b.ReservedMicros, b.SpentMicros, b.LimitMicros)
	}
	t.Logf("%s: %d reservations in %s (%.0f/s), %d admitted, %d refused (402)",
		dbs[0].Dialect(), callers, elapsed.Round(time.Millisecond), callers/elapsed.Seconds(), admitted.Load(), refused.Load())
}
