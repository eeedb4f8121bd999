package app

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools"
)

// BenchmarkReadJourneyIsolation measures a read-only journey
// (order_status → lookup_order) one at a time, healthy, and while another
// tool (check_change_window) hangs under 100 concurrent order-support
// journeys that fill its bulkhead (100 calls). It reports p50 and p99:
// the hanging tool holds only its own slots, so the second should stay
// within about 20 % of the first.
//
//	go test ./agent -run '^$' -bench ReadJourneyIsolation -benchtime 2000x
func BenchmarkReadJourneyIsolation(b *testing.B) {
	for _, hang := range []bool{false, true} {
		name := "healthy"
		if hang {
			name = "other-tool-hangs"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			db := storetest.Open(b)
			key, _ := redact.LoadOrCreateKey(dir)
			faults := tools.NewInjector(1)
			rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key), Faults: faults})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			secret, err := rt.SeedDemo(ctx)
			if err != nil {
				b.Fatal(err)
			}
			caller, err := rt.Gateway.Authenticate(ctx, secret)
			if err != nil {
				b.Fatal(err)
			}
			db.Transact(ctx, func(tx *store.Tx) error {
				return budgets.Set(ctx, tx, budgets.Spec{TenantID: caller.Tenant.ID, Period: budgets.Total, LimitMicros: 1 << 60, AlertPercent: 99}, time.Now())
			})
			bg, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			if hang {
				faults.Set("check_change_window", tools.Fault{Mode: tools.FaultHang})
				for range 100 {
					wg.Go(func() {
						for bg.Err() == nil {
							rt.Journeys.Run(bg, journeys.Request{Caller: caller, Input: "Please change the delivery address for ORD-1001 to 14 Harbour Road", RequestID: "bg"})
							select { // the load's pace: one journey a second each
							case <-bg.Done():
							case <-time.After(time.Second):
							}
						}
					})
				}
				full := wait.For(10*time.Second, func() bool {
					for _, h := range rt.Guard.Health() {
						if h.MaxConcurrent > 0 && h.InFlight == h.MaxConcurrent {
							return true
						}
					}
					return false
				})
				if !full {
					b.Fatal("the hanging tool's bulkhead did not fill")
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := rt.Journeys.Run(ctx, journeys.Request{Caller: caller, Input: "Where is my order ORD-1003?", RequestID: "bench"}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			stop()
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
