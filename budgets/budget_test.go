package budgets

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

func setup(t *testing.T, period string, limit int64) (*store.DB, string) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	var tenant tenants.Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		return Set(ctx, tx, Spec{TenantID: tenant.ID, Period: period, LimitMicros: limit, AlertPercent: 80}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, tenant.ID
}

func reserve(db *store.DB, tenant string, amount int64, now time.Time) error {
	return db.Transact(context.Background(), func(tx *store.Tx) error { return Reserve(context.Background(), tx, tenant, amount, now) })
}

func TestConcurrentReservationsNeverOverspend(t *testing.T) {
	const each = 1_000
	db, tenant := setup(t, Month, 50*each)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := reserve(db, tenant, each, time.Now())
			switch {
			case err == nil:
				admitted.Add(1)
				// Settle with a random-ish actual cost below the estimate.
				err := db.Transact(context.Background(), func(tx *store.Tx) error { return Settle(context.Background(), tx, tenant, each, each/2) })
				if err != nil {
					t.Error(err)
				}
			case errors.Is(err, ErrExhausted):
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := Get(context.Background(), db.Read(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	// Settled journeys spent half their estimate, so later ones fit too;
	// what matters is the invariant.
	if b.SpentMicros > b.LimitMicros || b.ReservedMicros != 0 {
		t.Fatalf("after settling: spent %d reserved %d limit %d; want spent <= limit and nothing reserved", b.SpentMicros, b.ReservedMicros, b.LimitMicros)
	}
	if admitted.Load() < 50 {
		t.Fatalf("admitted %d, want at least 50", admitted.Load())
	}
}

func TestExactlyTheReservationsThatFitAreAdmitted(t *testing.T) {
	const each = 1_000
	db, tenant := setup(t, Total, 50*each)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := reserve(db, tenant, each, time.Now()); err == nil {
				admitted.Add(1)
			} else if !errors.Is(err, ErrExhausted) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 50 {
		t.Fatalf("admitted %d of 200, want exactly 50", admitted.Load())
	}
	b, _ := Get(context.Background(), db.Read(), tenant)
	if b.ReservedMicros != 50*each || b.Remaining() != 0 {
		t.Fatalf("reserved %d remaining %d, want %d and 0", b.ReservedMicros, b.Remaining(), 50*each)
	}
	// Releasing all of them gives everything back.
	for range 50 {
		if err := db.Transact(context.Background(), func(tx *store.Tx) error { return Release(context.Background(), tx, tenant, each) }); err != nil {
			t.Fatal(err)
		}
	}
	b, _ = Get(context.Background(), db.Read(), tenant)
	if b.ReservedMicros != 0 || b.SpentMicros != 0 {
		t.Fatalf("after releasing: reserved %d spent %d, want 0 and 0", b.ReservedMicros, b.SpentMicros)
	}
}

func TestSettleChargesActualCappedAtReservation(t *testing.T) {
	db, tenant := setup(t, Total, 10_000)
	if err := reserve(db, tenant, 4_000, time.Now()); err != nil {
		t.Fatal(err)
	}
	settle := func(reserved, actual int64) {
		if err := db.Transact(context.Background(), func(tx *store.Tx) error { return Settle(context.Background(), tx, tenant, reserved, actual) }); err != nil {
			t.Fatal(err)
		}
	}
	settle(4_000, 9_999) // more than reserved: capped
	b, _ := Get(context.Background(), db.Read(), tenant)
	if b.SpentMicros != 4_000 || b.ReservedMicros != 0 {
		t.Fatalf("spent %d reserved %d, want 4000 and 0", b.SpentMicros, b.ReservedMicros)
	}
}

func TestNewPeriodStartsFresh(t *testing.T) {
	db, tenant := setup(t, Day, 1_000)
	day1 := time.Now().UTC()
	if err := reserve(db, tenant, 1_000, day1); err != nil {
		t.Fatal(err)
	}
	if err := db.Transact(context.Background(), func(tx *store.Tx) error { return Settle(context.Background(), tx, tenant, 1_000, 1_000) }); err != nil {
		t.Fatal(err)
	}
	if err := reserve(db, tenant, 1, day1); !errors.Is(err, ErrExhausted) {
		t.Fatalf("same day: %v, want ErrExhausted", err)
	}
	if err := reserve(db, tenant, 1_000, day1.Add(24*time.Hour)); err != nil {
		t.Fatalf("next day: %v, want a fresh budget", err)
	}
	b, _ := Get(context.Background(), db.Read(), tenant)
	if b.SpentMicros != 0 || b.ReservedMicros != 1_000 {
		t.Fatalf("next day spent %d reserved %d, want 0 and 1000", b.SpentMicros, b.ReservedMicros)
	}
}

func TestNoBudgetAdmitsNothing(t *testing.T) {
	db, _ := setup(t, Total, 1)
	if err := reserve(db, "no-such-tenant", 1, time.Now()); !errors.Is(err, ErrNoBudget) {
		t.Fatalf("Reserve without a budget = %v, want ErrNoBudget", err)
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		spec Spec
		bad  []string
	}{
		{Spec{Period: Month, LimitMicros: 1, AlertPercent: 80}, nil},
		{Spec{Period: "week", LimitMicros: 1, AlertPercent: 80}, []string{"period"}},
		{Spec{Period: Day, LimitMicros: -1, AlertPercent: 0}, []string{"limit", "alert_percent"}},
	}
	for _, tt := range tests {
		got := tt.spec.Validate()
		if len(got) != len(tt.bad) {
			t.Errorf("Validate(%+v) = %v, want errors for %v", tt.spec, got, tt.bad)
		}
		for _, f := range tt.bad {
			if got[f] == "" {
				t.Errorf("Validate(%+v) has no error for %s", tt.spec, f)
			}
		}
	}
}

func BenchmarkReserveSettle(b *testing.B) {
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var tenant tenants.Tenant
	db.Transact(ctx, func(tx *store.Tx) error {
		tenant, _ = tenants.Insert(ctx, tx, "acme", "Acme")
		return Set(ctx, tx, Spec{TenantID: tenant.ID, Period: Total, LimitMicros: 1 << 60, AlertPercent: 80}, time.Now())
	})
	b.ResetTimer()
	for b.Loop() {
		if err := reserve(db, tenant.ID, 100, time.Now()); err != nil {
			b.Fatal(err)
		}
		db.Transact(ctx, func(tx *store.Tx) error { return Settle(ctx, tx, tenant.ID, 100, 50) })
	}
}
