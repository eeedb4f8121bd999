package budgets

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// The rows the Budgets page itemised before it read running totals, summed
// as it summed them then (journeys.SpentSince, approvals.ChargedSince,
// models.SpentSince, which this package cannot import).
func summedRows(t testing.TB, q store.Querier, tenantID string, since time.Time) Spend {
	t.Helper()
	var sp Spend
	at := store.FormatTime(since)
	for _, s := range []struct {
		query  string
		micros *int64
		n      *int
	}{
		{`SELECT COALESCE(SUM(cost_micros), 0), COUNT(*) FROM journeys WHERE tenant_id = ? AND created_at >= ? AND cost_micros > 0`, &sp.Journeys, &sp.JourneyCount},
		{`SELECT COALESCE(SUM(cost_micros), 0), COUNT(*) FROM actions WHERE tenant_id = ? AND charged_at >= ? AND journey_id = ''`, &sp.Actions, &sp.ActionCount},
		{`SELECT COALESCE(SUM(cost_micros), 0), COUNT(*) FROM model_calls WHERE tenant_id = ? AND created_at >= ?`, &sp.Models, &sp.ModelCount},
	} {
		if err := q.QueryRowContext(context.Background(), s.query, tenantID, at).Scan(s.micros, s.n); err != nil {
			t.Fatal(err)
		}
	}
	return sp
}

func spendSince(t testing.TB, q store.Querier, tenantID string, since time.Time) Spend {
	t.Helper()
	sp, err := SpendSince(context.Background(), q, tenantID, since)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// A journey row as the runtime writes it: admitted running at no cost.
func insertJourney(ctx context.Context, tx *store.Tx, id, tenantID, keyID string, cost int64, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, release_digest, status, cost_micros, created_at)
		VALUES (?, ?, ?, ?, ?, 'sha256:test', 'running', ?, ?)`, id, tenantID, keyID, "req-"+id, "corr-"+id, cost, store.FormatTime(at))
	return err
}

func insertAction(ctx context.Context, tx *store.Tx, id, tenantID, journeyID, keyID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO actions (id, tenant_id, journey_id, key_id, tool, arguments_sealed, arguments_redacted, summary,
			impact, reversibility, policy_rule, payload_digest, idempotency_key, status, expires_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'issue_refund', 'sealed', '{}', 'Refund', 'high', 'compensatable', 'test', ?, ?, 'pending', ?, ?, ?)`,
		id, tenantID, journeyID, keyID, "sha256:"+id, "idem-"+id, store.FormatTime(at.Add(time.Hour)), store.FormatTime(at), store.FormatTime(at))
	return err
}

func insertModelCall(ctx context.Context, tx *store.Tx, id, tenantID, keyID string, cost int64, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO model_calls (id, tenant_id, key_id, alias, status, cost_micros, created_at)
		VALUES (?, ?, ?, 'chat', 'ok', ?, ?)`, id, tenantID, keyID, cost, store.FormatTime(at))
	return err
}

// The totals move with every write that changes what the page itemises:
// a journey's cost set at its end and grown when an approved step
// resumes it, a journey recorded finished (an MCP call's trace), an
// action charged outside any journey (and one a journey proposed, which
// its journey's cost covers), model calls whether they cost anything or
// not. For each period they equal the sum over the rows; deleting rows
// (trace retention) leaves them as they were.
func TestSpendTotalsFollowTheRows(t *testing.T) {
	db, tenant := setup(t, Month, 1<<40)
	ctx := context.Background()
	now := time.Now().UTC()
	today := PeriodStart(Day, now)
	lastMonth := PeriodStart(Month, now).Add(-time.Hour) // the last day of the previous month
	err := db.Transact(ctx, func(tx *store.Tx) error {
		other, err := tenants.Insert(ctx, tx, "other", "Other")
		if err != nil {
			return err
		}
		for i, at := range []time.Time{now, today.Add(time.Minute), lastMonth, PeriodStart(Month, now).Add(time.Minute)} {
			for k, key := range []string{"key_a", "key_b", ""} {
				id := fmt.Sprintf("jrn_%d_%d", i, k)
				if err := insertJourney(ctx, tx, id, tenant, key, 0, at); err != nil {
					return err
				}
				// Settled: the cost is set at the end, and grows when a
				// resumed step is charged.
				if _, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'completed', cost_micros = ? WHERE id = ?`, 1000*(i+1)+k, id); err != nil {
					return err
				}
				if i%2 == 0 {
					if _, err := tx.ExecContext(ctx, `UPDATE journeys SET cost_micros = cost_micros + 250 WHERE id = ?`, id); err != nil {
						return err
					}
				}
				// Failed before it used anything: no cost, not counted.
				if err := insertJourney(ctx, tx, id+"_failed", tenant, key, 0, at); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'failed', error_code = 'interrupted' WHERE id = ?`, id+"_failed"); err != nil {
					return err
				}
				if err := insertModelCall(ctx, tx, "mc_"+id, tenant, key, int64(300*k), at); err != nil {
					return err
				}
				if err := insertAction(ctx, tx, "act_"+id, tenant, "", key, at); err != nil {
					return err
				}
				if k != 2 { // charged once executed; a failed one never is
					if _, err := tx.ExecContext(ctx, `UPDATE actions SET cost_micros = ?, charged_at = ? WHERE id = ?`, 700+k, store.FormatTime(at), "act_"+id); err != nil {
						return err
					}
				}
				if err := insertAction(ctx, tx, "act_j_"+id, tenant, id, key, at); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE actions SET cost_micros = 900, charged_at = ? WHERE id = ?`, store.FormatTime(at), "act_j_"+id); err != nil {
					return err
				}
			}
		}
		// An MCP call's trace is written finished, with its cost.
		if _, err := tx.ExecContext(ctx, `INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, release_digest, status, cost_micros, created_at)
			VALUES ('jrn_mcp', ?, 'key_a', 'r', 'c', '', 'completed', 4242, ?)`, tenant, store.FormatTime(now)); err != nil {
			return err
		}
		// Another tenant's spend is its own.
		if err := insertJourney(ctx, tx, "jrn_other", other.ID, "key_o", 99_999, now); err != nil {
			return err
		}
		return insertModelCall(ctx, tx, "mc_other", other.ID, "key_o", 5, now)
	})
	if err != nil {
		t.Fatal(err)
	}

	periods := map[string]time.Time{Day: today, Month: PeriodStart(Month, now), Total: PeriodStart(Total, now)}
	want := map[string]Spend{}
	for name, since := range periods {
		want[name] = summedRows(t, db.Read(), tenant, since)
		if got := spendSince(t, db.Read(), tenant, since); got != want[name] {
			t.Errorf("%s: running totals %+v, want the rows' sums %+v", name, got, want[name])
		}
	}
	if w := want[Total]; w.JourneyCount != 13 || w.ActionCount != 8 || w.ModelCount != 12 {
		t.Fatalf("the rows count %d journeys, %d actions, %d model calls; the test meant 13, 8 and 12", w.JourneyCount, w.ActionCount, w.ModelCount)
	}
	if want[Month] == want[Total] || today.After(periods[Month]) && want[Day] == want[Month] {
		t.Fatalf("the periods do not tell apart: %+v", want)
	}

	// Retention deletes the journeys; what they cost stays spent.
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM journeys WHERE tenant_id = ?`, tenant)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for name, since := range periods {
		if got := spendSince(t, db.Read(), tenant, since); got != want[name] {
			t.Errorf("%s after retention: %+v, want %+v as before", name, got, want[name])
		}
	}
	if n := summedRows(t, db.Read(), tenant, periods[Total]).JourneyCount; n != 0 {
		t.Fatalf("%d journeys left after deleting them all", n)
	}
}

// Settlements of one tenant and one key (the same totals row) committed
// at once, over two handles on one database (two replicas), lose no
// increment: each adds its journey's cost and its model call, and the
// totals equal the rows' sums. On PostgreSQL (WARDEN_TEST_POSTGRES) the
// transactions really interleave; on SQLite they take turns.
func TestConcurrentSettlementsLoseNoIncrement(t *testing.T) {
	const (
		workers = 16
		each    = 25
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
	var tenant tenants.Tenant
	err := dbs[0].Transact(ctx, func(tx *store.Tx) error {
		var err error
		if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		return Set(ctx, tx, Spec{TenantID: tenant.ID, Period: Month, LimitMicros: 1 << 40, AlertPercent: 80}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			db := dbs[w%2]
			for i := range each {
				id := fmt.Sprintf("jrn_%02d_%03d", w, i)
				cost := int64(1 + (w*each+i)%97)
				if err := db.Transact(ctx, func(tx *store.Tx) error {
					if err := Reserve(ctx, tx, tenant.ID, 100, now); err != nil {
						return err
					}
					return insertJourney(ctx, tx, id, tenant.ID, "key_a", 0, now)
				}); err != nil {
					t.Error(err)
					return
				}
				// The settlement: budget, journey's end and a model call in
				// one transaction.
				if err := db.Transact(ctx, func(tx *store.Tx) error {
					if err := Settle(ctx, tx, tenant.ID, 100, cost); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'completed', cost_micros = ? WHERE id = ?`, cost, id); err != nil {
						return err
					}
					return insertModelCall(ctx, tx, "mc_"+id, tenant.ID, "key_a", cost*2, now)
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	since := PeriodStart(Month, now)
	want := summedRows(t, dbs[0].Read(), tenant.ID, since)
	if want.JourneyCount != workers*each || want.ModelCount != workers*each {
		t.Fatalf("%d journeys and %d model calls written, want %d each", want.JourneyCount, want.ModelCount, workers*each)
	}
	if got := spendSince(t, dbs[0].Read(), tenant.ID, since); got != want {
		t.Errorf("after %d concurrent settlements the totals are %+v, want the rows' sums %+v", workers*each, got, want)
	}
	b, err := Get(ctx, dbs[0].Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.SpentMicros != want.Journeys || b.ReservedMicros != 0 {
		t.Errorf("budget spent %d reserved %d, want %d and 0", b.SpentMicros, b.ReservedMicros, want.Journeys)
	}
}
