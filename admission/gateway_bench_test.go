package admission

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkAdmission measures admission alone: key authentication, the
// rate limit and the durable budget reservation, on a real database file.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	db := storetest.Open(b)
	var secret string
	var tenant tenants.Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Total, LimitMicros: 1 << 60, AlertPercent: 80}, time.Now()); err != nil {
			return err
		}
		sealer, err := seal.New(make([]byte, 32))
		if err != nil {
			return err
		}
		_, secrets, err := keys.Create(ctx, tx, sealer, keys.NewSpec{TenantID: tenant.ID, Name: "bench", Scopes: []string{"skill:x"}, RatePerMin: 600000, Burst: 10000, CreatedBy: "bench"})
		secret = secrets.Key
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	g := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		c, err := g.Authenticate(ctx, secret)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Transact(ctx, func(tx *store.Tx) error { return Reserve(ctx, tx, c.Tenant.ID, 100, time.Now()) }); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}
