package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkReadJourneyHTTP runs the demo's read journey over HTTP
// (authentication, admission, routing, one lookup, settlement), from
// several clients at once, and reports journeys a second.
//
//	go test -run '^$' -bench ReadJourneyHTTP -benchtime 2000x ./web/
func BenchmarkReadJourneyHTTP(b *testing.B) {
	in := startWardenDemo(b, map[string]string{"WARDEN_TENANT_RATE": "1000000"})
	ctx := context.Background()
	tenant, err := tenants.BySlug(ctx, in.DB.Read(), "acme")
	if err != nil {
		b.Fatal(err)
	}
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Total, LimitMicros: 1 << 60, AlertPercent: 99}, time.Now())
	}); err != nil {
		b.Fatal(err)
	}
	_, key := newKeyIn(b, in, "acme", "bench", []string{"skill:order_status", "tool:lookup_order"}, "bench")
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 64
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := journey(b, in, key, "Where is my order ORD-1003?", nil)
			if r.Status != http.StatusOK {
				b.Errorf("POST /v1/journeys = %d %s", r.Status, r.Raw)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "journeys/s")
}
