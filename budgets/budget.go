// Package budget keeps each tenant's spending within its limit. Admission
// reserves a journey's estimated maximum cost with one conditional update
// that fails when spent + reserved + estimate would pass the limit, so
// concurrent journeys can never overspend; settlement charges what was used
// and releases the rest. Money is integer micro-units.
//
// The console sets a budget with SetAudited, which writes it and its audit
// event in one transaction:
//
//	changed, err := budget.SetAudited(ctx, db, actor, budget.Spec{TenantID: id, Period: budget.Month,
//		LimitMicros: 500_000_000, AlertPercent: 80}, time.Now())
//
// The runtime reserves with Reserve before a journey and settles with
// Settle (or Release) after it, inside its own transactions. The Budgets
// page reads what a period's spend is made of with SpendSince, from
// running totals the database keeps as journeys, actions and model calls
// are charged (spend.go).
package budgets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// Periods a budget may cover.
const (
	Day   = "day"
	Month = "month"
	Total = "total"
)

// ErrExhausted means the reservation does not fit in what is left.
var ErrExhausted = errors.New("budget exhausted")

// ErrNoBudget means the tenant has no budget: nothing is admitted.
var ErrNoBudget = errors.New("no budget configured")

// Budget is a tenant's budget for the current period.
type Budget struct {
	TenantID       string
	Period         string
	LimitMicros    int64
	SpentMicros    int64
	ReservedMicros int64
	AlertPercent   int
	PeriodStart    time.Time
}

// Remaining is what can still be reserved.
func (b Budget) Remaining() int64 {
	return max(0, b.LimitMicros-b.SpentMicros-b.ReservedMicros)
}

// UsedPercent is spent plus reserved, as a share of the limit (0–100).
func (b Budget) UsedPercent() int {
	if b.LimitMicros <= 0 {
		return 100
	}
	return int(min(100, (b.SpentMicros+b.ReservedMicros)*100/b.LimitMicros))
}

// Alerting reports whether use has reached the alert threshold.
func (b Budget) Alerting() bool { return b.UsedPercent() >= b.AlertPercent }

// PeriodStart is the start of the period containing now, in UTC.
func PeriodStart(period string, now time.Time) time.Time {
	now = now.UTC()
	switch period {
	case Day:
		return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		return time.Unix(0, 0).UTC()
	}
}

// Spec is what an admin sets.
type Spec struct {
	TenantID     string
	Period       string
	LimitMicros  int64
	AlertPercent int
}

// Validate returns one message per bad field.
func (s Spec) Validate() map[string]string {
	errs := map[string]string{}
	if s.Period != Day && s.Period != Month && s.Period != Total {
		errs["period"] = "Choose day, month or total."
	}
	if s.LimitMicros < 0 {
		errs["limit"] = "The limit cannot be negative."
	}
	if s.AlertPercent < 1 || s.AlertPercent > 100 {
		errs["alert_percent"] = "The alert threshold is a percentage from 1 to 100."
	}
	return errs
}

// Set creates or changes a tenant's budget inside tx. Spent and reserved
// amounts are kept; changing the period starts a new one. An invalid spec
// is a *store.ValidationError. SetAudited is the same with its audit
// event, for changes a person makes.
func Set(ctx context.Context, tx *store.Tx, s Spec, now time.Time) error {
	if errs := s.Validate(); len(errs) > 0 {
		return fmt.Errorf("set budget for %s: %w", s.TenantID, &store.ValidationError{Fields: errs})
	}
	start := store.FormatTime(PeriodStart(s.Period, now))
	_, err := tx.ExecContext(ctx, `
		INSERT INTO budgets (tenant_id, period, limit_micros, alert_percent, period_start, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id) DO UPDATE SET
			spent_micros = CASE WHEN budgets.period = excluded.period THEN budgets.spent_micros ELSE 0 END,
			period_start = CASE WHEN budgets.period = excluded.period THEN budgets.period_start ELSE excluded.period_start END,
			period = excluded.period, limit_micros = excluded.limit_micros,
			alert_percent = excluded.alert_percent, updated_at = excluded.updated_at`,
		s.TenantID, s.Period, s.LimitMicros, s.AlertPercent, start, store.FormatTime(now))
	if err != nil {
		return fmt.Errorf("set budget for %s: %w", s.TenantID, err)
	}
	return nil
}

// SetAudited creates or changes a tenant's budget as Set does, and records
// who did it, in one transaction. A budget caps what the tenant's agents
// may spend, so the event keeps the values it replaced; saving the current
// budget again changes and records nothing (changed false). An invalid
// spec is a *store.ValidationError; an unknown tenant store.ErrNotFound.
func SetAudited(ctx context.Context, db *store.DB, actor audit.Actor, s Spec, now time.Time) (changed bool, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		slug, err := tenants.SlugOf(ctx, tx, s.TenantID)
		if err != nil {
			return err
		}
		details := map[string]any{"period": s.Period, "limit_micros": s.LimitMicros, "alert_percent": s.AlertPercent}
		prev, err := Get(ctx, tx, s.TenantID)
		switch {
		case errors.Is(err, ErrNoBudget):
		case err != nil:
			return err
		case prev.Period == s.Period && prev.LimitMicros == s.LimitMicros && prev.AlertPercent == s.AlertPercent:
			return nil
		default:
			details["previous_period"] = prev.Period
			details["previous_limit_micros"] = prev.LimitMicros
			details["previous_alert_percent"] = prev.AlertPercent
		}
		if err := Set(ctx, tx, s, now); err != nil {
			return err
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Tenant:  slug,
			Verb:    "budget.set",
			Subject: audit.Subject{Type: "budget", ID: s.TenantID},
			Details: details,
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// Get loads a tenant's budget, or ErrNoBudget.
func Get(ctx context.Context, q store.Querier, tenantID string) (Budget, error) {
	b, err := store.Get(ctx, q, scanBudget, selectBudget+` WHERE tenant_id = ?`, tenantID)
	if errors.Is(err, store.ErrNotFound) {
		return Budget{}, ErrNoBudget
	}
	if err != nil {
		return Budget{}, fmt.Errorf("load budget of %s: %w", tenantID, err)
	}
	// A period that has ended is shown as the new one, with nothing spent
	// yet; the next reservation writes the roll-over.
	return b.current(time.Now()), nil
}

const selectBudget = `
		SELECT tenant_id, period, limit_micros, spent_micros, reserved_micros, alert_percent, period_start
		FROM budgets`

func scanBudget(s store.Scanner) (Budget, error) {
	var b Budget
	var start string
	if err := s.Scan(&b.TenantID, &b.Period, &b.LimitMicros, &b.SpentMicros, &b.ReservedMicros, &b.AlertPercent, &start); err != nil {
		return Budget{}, err
	}
	b.PeriodStart, _ = time.Parse(time.RFC3339Nano, start)
	return b, nil
}

// current is b in the period containing now: one that has ended reads as
// the new one, with nothing spent yet.
func (b Budget) current(now time.Time) Budget {
	if cur := PeriodStart(b.Period, now); b.PeriodStart.Before(cur) {
		b.PeriodStart, b.SpentMicros = cur, 0
	}
	return b
}

// Reserve reserves amount micro-units of the tenant's budget with one
// conditional update. A new period starts with nothing spent. It returns
// ErrExhausted when the amount does not fit and ErrNoBudget when the tenant
// has none; any other error means the budget could not be written, and the
// caller must not admit (fail closed).
func Reserve(ctx context.Context, tx *store.Tx, tenantID string, amount int64, now time.Time) error {
	if amount < 0 {
		return fmt.Errorf("reserve: negative amount %d", amount)
	}
	// The period is rolled inside the same statement: spent counts from the
	// start of the current period.
	res, err := tx.ExecContext(ctx, `
		UPDATE budgets SET
			spent_micros    = CASE WHEN period_start < `+periodStartSQL+` THEN 0 ELSE spent_micros END,
			period_start    = CASE WHEN period_start < `+periodStartSQL+` THEN `+periodStartSQL+` ELSE period_start END,
			reserved_micros = reserved_micros + :amount
		WHERE tenant_id = :tenant
		  AND (CASE WHEN period_start < `+periodStartSQL+` THEN 0 ELSE spent_micros END) + reserved_micros + :amount <= limit_micros`,
		sql.Named("amount", amount), sql.Named("tenant", tenantID),
		sql.Named("day", store.FormatTime(PeriodStart(Day, now))),
		sql.Named("month", store.FormatTime(PeriodStart(Month, now))),
		sql.Named("total", store.FormatTime(PeriodStart(Total, now))))
	if err != nil {
		return fmt.Errorf("reserve budget: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("reserve budget: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := Get(ctx, tx, tenantID); errors.Is(err, ErrNoBudget) {
		return ErrNoBudget
	}
	return ErrExhausted
}

const periodStartSQL = `(CASE period WHEN 'day' THEN :day WHEN 'month' THEN :month ELSE :total END)`

// Settle charges actual micro-units against a reservation of reserved and
// releases the rest. The charge is capped at the reservation: a journey
// cannot spend what it did not reserve.
func Settle(ctx context.Context, tx *store.Tx, tenantID string, reserved, actual int64) error {
	charge := min(max(actual, 0), reserved)
	_, err := tx.ExecContext(ctx, `
		UPDATE budgets SET reserved_micros = CASE WHEN reserved_micros > ? THEN reserved_micros - ? ELSE 0 END,
			spent_micros = spent_micros + ?
		WHERE tenant_id = ?`, reserved, reserved, charge, tenantID)
	if err != nil {
		return fmt.Errorf("settle budget: %w", err)
	}
	return nil
}

// Charge is Settle without the cap: it charges actual micro-units even
// above the reservation. It is for money an outside party has already
// taken, such as a model call whose upstream reported more usage than was
// reserved for it: the budget must show what was spent, even past its
// limit, rather than a smaller number that was never true. A negative
// actual charges nothing.
func Charge(ctx context.Context, tx *store.Tx, tenantID string, reserved, actual int64) error {
	_, err := tx.ExecContext(ctx, `
		UPDATE budgets SET reserved_micros = CASE WHEN reserved_micros > ? THEN reserved_micros - ? ELSE 0 END,
			spent_micros = spent_micros + ?
		WHERE tenant_id = ?`, reserved, reserved, max(actual, 0), tenantID)
	if err != nil {
		return fmt.Errorf("charge budget: %w", err)
	}
	return nil
}

// Release gives a whole reservation back (a journey that was cancelled or
// failed before it used anything).
func Release(ctx context.Context, tx *store.Tx, tenantID string, reserved int64) error {
	return Settle(ctx, tx, tenantID, reserved, 0)
}

// List returns every tenant's budget for the period containing now, in
// tenant order. A period that has ended reads as the new one, with
// nothing spent yet, as Get does.
func List(ctx context.Context, q store.Querier, now time.Time) ([]Budget, error) {
	out, err := store.Query(ctx, q, scanBudget, selectBudget+` ORDER BY tenant_id`)
	if err != nil {
		return nil, fmt.Errorf("list budgets: %w", err)
	}
	for i := range out {
		out[i] = out[i].current(now)
	}
	return out, nil
}
