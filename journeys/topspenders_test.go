package journeys

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// topByScan is how the Budgets page chose its top spenders before
// top_journeys: every journey of the period, sorted by cost.
func topByScan(t *testing.T, q store.Querier, tenantID string, since time.Time, n int) []string {
	t.Helper()
	ids, err := store.Strings(context.Background(), q, `SELECT id FROM journeys WHERE tenant_id = ? AND created_at >= ? AND cost_micros > 0
		ORDER BY cost_micros DESC, id DESC LIMIT ?`, tenantID, store.FormatTime(since), n)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func topIDs(t *testing.T, q store.Querier, tenantID string, since time.Time) []string {
	t.Helper()
	js, err := TopSpenders(context.Background(), q, tenantID, since, 5)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range js {
		if j.TenantID != tenantID || j.Cost.TotalMicros <= 0 {
			t.Errorf("top spender %s: tenant %s cost %d", j.ID, j.TenantID, j.Cost.TotalMicros)
		}
		ids = append(ids, j.ID)
	}
	return ids
}

// TopSpenders reads each day's five costliest journeys (top_journeys)
// instead of sorting the period's journeys, and finds the same ones for a
// day, a month and all time: with costs that tie, journeys charged more
// when an approved step resumes them, journeys that cost nothing, and
// another tenant's dearer journeys. Retention that purges whole days
// leaves the same answer as a scan of what is left; a purged journey is
// never shown.
func TestTopSpendersMatchASortOfThePeriod(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now().UTC()
	day := 24 * time.Hour
	var acme, other tenants.Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if acme, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		if other, err = tenants.Insert(ctx, tx, "other", "Other"); err != nil {
			return err
		}
		for i := range 240 {
			at := now.Add(-time.Duration(i%6) * day).Add(-time.Duration(i) * time.Second)
			id := fmt.Sprintf("jrn_%03d", i)
			if _, err := tx.ExecContext(ctx, `INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, created_at)
				VALUES (?, ?, ?, ?, '', 'running', ?)`, id, acme.ID, id, id, store.FormatTime(at)); err != nil {
				return err
			}
			cost := int64((i * 7919) % 50) // ties, and some journeys cost nothing
			if _, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'completed', cost_micros = ? WHERE id = ?`, cost, id); err != nil {
				return err
			}
			if i%11 == 0 { // resumed after approval: its step is charged
				if _, err := tx.ExecContext(ctx, `UPDATE journeys SET cost_micros = cost_micros + 30 WHERE id = ?`, id); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, cost_micros, created_at)
				VALUES (?, ?, ?, ?, '', 'completed', 1000000, ?)`, id+"_other", other.ID, id+"o", id+"o", store.FormatTime(at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	today := now.Truncate(day)
	check := func(when string) {
		t.Helper()
		for _, since := range []time.Time{today, today.Add(-2 * day), today.AddDate(0, -1, 0), time.Unix(0, 0)} {
			want := topByScan(t, db.Read(), acme.ID, since, 5)
			if got := topIDs(t, db.Read(), acme.ID, since); !slices.Equal(got, want) || len(want) != 5 {
				t.Errorf("%s, since %s: top spenders %v, want %v", when, since.Format(time.DateOnly), got, want)
			}
		}
	}
	check("all kept")
	var most int
	if err := db.Read().QueryRowContext(ctx, `SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM top_journeys GROUP BY tenant_id, day) d`).Scan(&most); err != nil || most != 5 {
		t.Errorf("top_journeys keeps at most %d journeys a day (%v), want 5", most, err)
	}

	// Retention purges the three oldest days.
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := DeleteOlderThan(ctx, tx, acme.ID, today.Add(-2*day))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("after retention")

	// A purge that cuts into a day never shows a journey it deleted.
	cut := now.Add(-time.Minute)
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := DeleteOlderThan(ctx, tx, acme.ID, cut)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range topIDs(t, db.Read(), acme.ID, time.Unix(0, 0)) {
		j, err := GetJourney(ctx, db.Read(), id)
		if err != nil || j.CreatedAt.Before(cut) {
			t.Errorf("top spender %s, created %s, was purged (%v)", id, j.CreatedAt, err)
		}
	}
}
