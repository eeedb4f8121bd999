package budgets

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// Spend itemises what a tenant spent in a period: its journeys (those that
// cost anything), its actions charged outside any journey (proposed
// through /v1/actions, or reversals) and its model calls, each with how
// many there were. Money is integer micro-units.
type Spend struct {
	Journeys, Actions, Models             int64
	JourneyCount, ActionCount, ModelCount int
}

// Kinds of spend_totals rows.
const (
	kindJourney = "journey"
	kindAction  = "action"
	kindModel   = "model"
)

// SpendSince reads what the tenant spent from since on, from the running
// totals the database keeps per tenant, UTC day, kind and key
// (spend_totals, kept by triggers in the statement that writes each
// journey's cost, action's charge or model call: migration 0037). It reads
// one row per day, kind and key, however many journeys there were, and
// keeps counting what trace retention has since deleted. Totals are by
// UTC day, so since counts from the start of its day; a budget period
// starts at one.
func SpendSince(ctx context.Context, q store.Querier, tenantID string, since time.Time) (Spend, error) {
	since = PeriodStart(Day, since)
	var sp Spend
	type total struct {
		kind   string
		micros int64
		items  int
	}
	rows, err := store.Query(ctx, q, func(s store.Scanner) (total, error) {
		var t total
		err := s.Scan(&t.kind, &t.micros, &t.items)
		return t, err
	}, `SELECT kind, COALESCE(SUM(micros), 0), COALESCE(SUM(items), 0) FROM spend_totals
		WHERE tenant_id = ? AND day >= ? GROUP BY kind`, tenantID, store.FormatTime(since))
	if err != nil {
		return Spend{}, fmt.Errorf("spend of %s: %w", tenantID, err)
	}
	for _, t := range rows {
		switch t.kind {
		case kindJourney:
			sp.Journeys, sp.JourneyCount = t.micros, t.items
		case kindAction:
			sp.Actions, sp.ActionCount = t.micros, t.items
		case kindModel:
			sp.Models, sp.ModelCount = t.micros, t.items
		}
	}
	return sp, nil
}
