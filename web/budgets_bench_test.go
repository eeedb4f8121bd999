package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkBudgetsPage times erin's GET /budgets (four tenants with a
// monthly budget) with 10,000 and with 1,000,000 journeys this month, and
// a model call for every ten journeys: the page reads running totals and
// each day's top spenders, so the two should cost about the same. Before
// the totals it added up every journey of the month on each view (22 ms
// at a few journeys, 228 ms at 372,000). The journeys are bulk-inserted
// through the same triggers that keep the totals in production.
// WARDEN_BENCH_KEEP_DB=path keeps a copy of each seeded database
// (path.10000, path.1000000).
//
//	go test ./web -run '^$' -bench BudgetsPage -benchtime 200x
func BenchmarkBudgetsPage(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a million journeys")
	}
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("journeys=%d", n), func(b *testing.B) {
			in := startWardenDemo(b, nil)
			start := time.Now()
			seedMonth(b, in.DB, n)
			b.Logf("seeded %d journeys and %d model calls this month in %s", n, n/10, time.Since(start).Round(time.Millisecond))
			if path := os.Getenv("WARDEN_BENCH_KEEP_DB"); path != "" {
				// A copy to study query plans with the sqlite3 shell.
				if _, err := in.DB.Read().Exec(`VACUUM INTO ?`, fmt.Sprintf("%s.%d", path, n)); err != nil {
					b.Fatal(err)
				}
			}
			if in.DB.Dialect() == store.SQLite {
				// As the periodic checkpoints leave a running installation:
				// the bulk load's write-ahead log folded into the database.
				if _, err := in.DB.Read().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					b.Fatal(err)
				}
			}
			in.waitReady(b)
			erin := newBrowser(b, in.URL)
			erin.loginDev("erin")
			if p := erin.get("/budgets"); p.Status != http.StatusOK || text(p, "budget-spend-journeys-bench-0") == "$0.00" {
				b.Fatalf("GET /budgets = %d, bench-0 journeys %q", p.Status, text(p, "budget-spend-journeys-bench-0"))
			}
			for b.Loop() {
				if p := erin.get("/budgets"); p.Status != http.StatusOK {
					b.Fatalf("GET /budgets = %d", p.Status)
				}
			}
		})
	}
}

// seedMonth bulk-inserts n finished journeys between the start of the
// month and now across acme and three more tenants, each with a monthly
// budget, over four keys a tenant, and a model call for every ten.
func seedMonth(b *testing.B, db *store.DB, n int) {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	from := budgets.PeriodStart(budgets.Month, now)
	span := now.Sub(from)
	err := db.Transact(ctx, func(tx *store.Tx) error {
		acme, err := tenants.BySlug(ctx, tx, "acme")
		if err != nil {
			return err
		}
		ts := []tenants.Tenant{acme}
		for i := range 3 {
			t, err := tenants.Insert(ctx, tx, fmt.Sprintf("bench-%d", i), fmt.Sprintf("Bench %d", i))
			if err != nil {
				return err
			}
			ts = append(ts, t)
		}
		for _, t := range ts {
			if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: t.ID, Period: budgets.Month, LimitMicros: 1 << 50, AlertPercent: 80}, now); err != nil {
				return err
			}
		}
		at := func(i, of int) string {
			return store.FormatTime(from.Add(time.Duration(int64(span) / int64(of) * int64(i))))
		}
		if err := bulkInsert(ctx, tx, `INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, skill, release_digest, status, cost_micros, latency_ms, created_at, finished_at) VALUES `,
			"(?,?,?,?,?,?,?,?,?,?,?,?)", n, func(i int) []any {
				id := fmt.Sprintf("jrn_bench%08d", i)
				return []any{id, ts[i%len(ts)].ID, fmt.Sprintf("key_bench%d", i%16), "req-" + id, "corr-" + id, "order_status", "sha256:bench",
					"completed", int64((i*7919)%100_000 + 1), 300 + i%700, at(i, n), at(i, n)}
			}); err != nil {
			return fmt.Errorf("journeys: %w", err)
		}
		return bulkInsert(ctx, tx, `INSERT INTO model_calls (id, tenant_id, key_id, alias, status, cost_micros, created_at) VALUES `,
			"(?,?,?,?,?,?,?)", n/10, func(i int) []any {
				return []any{fmt.Sprintf("mc_bench%08d", i), ts[i%len(ts)].ID, fmt.Sprintf("key_bench%d", i%16), "chat", "ok", int64(i%5000 + 1), at(i, n/10)}
			})
	})
	if err != nil {
		b.Fatal(err)
	}
}
