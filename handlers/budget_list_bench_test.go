package handlers

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkBudgetCards times the queries of the Budgets page (budgetCards:
// four tenants' budgets, spend and top spenders) with 10,000 and with
// 1,000,000 journeys this month, without the HTTP server and its
// background work around them (web's BenchmarkBudgetsPage times the
// whole page). The journeys are inserted in one statement each through
// the triggers that keep the running totals, spread over the month's
// days and sixteen keys a tenant, with a model call for every ten. On
// PostgreSQL with WARDEN_TEST_POSTGRES.
//
//	go test ./handlers -run '^$' -bench BudgetCards -benchtime 200x
func BenchmarkBudgetCards(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a million journeys")
	}
	ctx := context.Background()
	admin := &identity.Principal{ID: "erin", Roles: []string{"admin"}, Tenants: []string{"*"}}
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("journeys=%d", n), func(b *testing.B) {
			db := storetest.Open(b)
			now := time.Now().UTC()
			start := time.Now()
			seedJourneys(b, db, n, now)
			b.Logf("seeded %d journeys and %d model calls in %s", n, n/10, time.Since(start).Round(time.Millisecond))
			cards, err := budgetCards(ctx, db, admin, now)
			if err != nil || len(cards) != 4 || cards[0].Spend.JourneyCount != n/4 || len(cards[0].Top) != topSpenders {
				b.Fatalf("budget cards: %d cards, first %+v, %v", len(cards), cards[0].Spend, err)
			}
			for b.Loop() {
				if _, err := budgetCards(ctx, db, admin, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// seedJourneys inserts n completed journeys that cost something across
// four tenants with a monthly budget, on the days of the month so far,
// and n/10 model calls, one INSERT … SELECT each.
func seedJourneys(b testing.TB, db *store.DB, n int, now time.Time) {
	b.Helper()
	ctx := context.Background()
	from := budgets.PeriodStart(budgets.Month, now)
	// Up to four instants this month, each on its own day when there are
	// that many days: the rows go round them.
	var at [4]string
	for i := range at {
		at[i] = store.FormatTime(from.Add(now.Sub(from) * time.Duration(i) / 4))
	}
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var ids []string
		for i := range 4 {
			t, err := tenants.Insert(ctx, tx, fmt.Sprintf("bench-%d", i), fmt.Sprintf("Bench %d", i))
			if err != nil {
				return err
			}
			if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: t.ID, Period: budgets.Month, LimitMicros: 1 << 50, AlertPercent: 80}, now); err != nil {
				return err
			}
			ids = append(ids, t.ID)
		}
		rows := `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < :n)`
		pick := func(list string) string {
			return `CASE i % 4 WHEN 0 THEN ` + list + `1 WHEN 1 THEN ` + list + `2 WHEN 2 THEN ` + list + `3 ELSE ` + list + `4 END`
		}
		named := func(k int) []any {
			out := []any{sql.Named("n", k)}
			for i := range 4 {
				out = append(out, sql.Named(fmt.Sprintf("t%d", i+1), ids[i]), sql.Named(fmt.Sprintf("a%d", i+1), at[i]))
			}
			return out
		}
		if _, err := tx.ExecContext(ctx, rows+`
			INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, skill, release_digest, status, cost_micros, created_at, finished_at)
			SELECT 'jrn_bench' || i, `+pick(":t")+`, 'key_bench' || (i % 64), 'req' || i, 'corr' || i, 'order_status', '', 'completed',
				(i % 100000) * 7919 % 100000 + 1, `+pick(":a")+`, `+pick(":a")+` FROM c`, named(n)...); err != nil {
			return fmt.Errorf("journeys: %w", err)
		}
		if _, err := tx.ExecContext(ctx, rows+`
			INSERT INTO model_calls (id, tenant_id, key_id, alias, status, cost_micros, created_at)
			SELECT 'mc_bench' || i, `+pick(":t")+`, 'key_bench' || (i % 64), 'chat', 'ok', i % 5000 + 1, `+pick(":a")+` FROM c`, named(n/10)...); err != nil {
			return fmt.Errorf("model calls: %w", err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
