package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// Target is what an action acts on (an order, an account, a customer), as
// far as dual control is concerned.
type Target struct {
	// Key is a keyed token of the target's value: the same target always
	// gives the same key, and an account number is not kept in the clear.
	Key string
	// Label is what people read: "ORD-1004", or a redacted account.
	Label string
}

// Requirement is how many approvers an action needs, and why.
type Requirement struct {
	Approvals int
	Basis     string // the sentence the action page shows; "" for the ordinary single approval
}

// Required applies a tenant's dual-control rule to a new action of amount
// on target, before it is created, inside the creating transaction tx:
// it is a read of the target's running total followed by the caller's
// insert, so two actions on one target created at once must be counted
// one after the other. On SQLite BEGIN IMMEDIATE already admits one
// writer at a time; on PostgreSQL, READ COMMITTED lets two transactions
// read the same total and both insert under the threshold (three $416
// refunds of a $1,249 order each getting one approver), so Required first
// takes the target's lock (lockTarget), held until tx ends. Call it before
// anything else in tx that locks: the project's lock order is target →
// action row → budget row → audit chain, and a target lock taken after
// one of the others could deadlock.
//
// The rule: thresholds are per currency, since minor units of one currency
// say nothing about another's. An action needs two approvers when
//   - its currency has no threshold (fail closed), or
//   - its amount reaches the threshold, or
//   - the tenant has live actions on the same target in another currency
//     within its window (amounts in two currencies cannot be added), or
//   - together with the tenant's other live actions on the same target
//     (pending, approved, executing or executed) created within the
//     tenant's window, it reaches the threshold: a $2,400 refund split into
//     three of $800 needs two approvers from the second on.
//
// A threshold of 0 switches dual control off for its currency.
func Required(ctx context.Context, tx *store.Tx, tenantID string, amount *money.Amount, target Target, now time.Time) (Requirement, error) {
	if amount == nil {
		return Requirement{Approvals: 1}, nil
	}
	if target.Key != "" {
		if err := lockTarget(ctx, tx, tenantID, target.Key); err != nil {
			return Requirement{}, err
		}
	}
	threshold, err := tenants.ThresholdFor(ctx, tx, tenantID, amount.Currency.Code)
	if errors.Is(err, store.ErrNotFound) {
		return Requirement{Approvals: 2, Basis: fmt.Sprintf("No dual-control threshold is set for %s, so two approvers decide every amount in it.", amount.Currency.Code)}, nil
	}
	if err != nil {
		return Requirement{}, err
	}
	if threshold == 0 {
		return Requirement{Approvals: 1}, nil
	}
	limit := money.Amount{Minor: threshold, Currency: amount.Currency}
	if amount.Minor >= threshold {
		return Requirement{Approvals: 2, Basis: fmt.Sprintf("%s reaches the dual-control threshold of %s.", money.Format(*amount), money.Format(limit))}, nil
	}
	if target.Key == "" {
		return Requirement{Approvals: 1}, nil
	}
	t, err := tenants.ByID(ctx, tx, tenantID)
	if err != nil {
		return Requirement{}, err
	}
	since := now.Add(-t.DualControlWindow)
	other, err := otherCurrencyOnTarget(ctx, tx, tenantID, target.Key, amount.Currency.Code, since)
	if err != nil {
		return Requirement{}, err
	}
	if other != "" {
		// Amounts in two currencies cannot be added without a rate, and a
		// split across currencies must not pass under both thresholds.
		return Requirement{Approvals: 2, Basis: fmt.Sprintf("%s already has live actions in %s within %s, and this one is in %s: amounts in different currencies on one target need two approvers.",
			target.Label, other, windowText(t.DualControlWindow), amount.Currency.Code)}, nil
	}
	earlier, err := liveAmountOnTarget(ctx, tx, tenantID, target.Key, amount.Currency.Code, since)
	if err != nil {
		return Requirement{}, err
	}
	total := money.Amount{Minor: earlier + amount.Minor, Currency: amount.Currency}
	if earlier > 0 && total.Minor >= threshold {
		return Requirement{Approvals: 2, Basis: fmt.Sprintf("Cumulative %s for %s over %s (this %s and %s earlier) reaches the dual-control threshold of %s.",
			money.Format(total), target.Label, windowText(t.DualControlWindow), money.Format(*amount),
			money.Format(money.Amount{Minor: earlier, Currency: amount.Currency}), money.Format(limit))}, nil
	}
	return Requirement{Approvals: 1}, nil
}

// lockTarget serialises the creation of a tenant's actions on one target
// across every replica until tx ends (a transaction-scoped advisory lock
// on PostgreSQL; nothing to do on SQLite, whose writers are serial). An
// action without an amount is not counted and takes no lock.
func lockTarget(ctx context.Context, tx *store.Tx, tenantID, targetKey string) error {
	if err := store.SerializeKey(ctx, tx, "dual_control", tenantID+"|"+targetKey); err != nil {
		return fmt.Errorf("dual control: %w", err)
	}
	return nil
}

// liveAmountOnTarget adds up the amounts of a tenant's live actions on one
// target in one currency created since since.
func liveAmountOnTarget(ctx context.Context, q store.Querier, tenantID, targetKey, currency string, since time.Time) (int64, error) {
	var sum int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount_minor), 0) FROM actions
		WHERE tenant_id = ? AND target_key = ? AND currency = ? AND created_at >= ?
		AND status IN (?, ?, ?, ?)`,
		tenantID, targetKey, currency, store.FormatTime(since),
		StatusPending, StatusApproved, StatusExecuting, StatusExecuted).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("dual control: amounts on the same target: %w", err)
	}
	return sum, nil
}

// otherCurrencyOnTarget returns a currency other than currency in which
// the tenant has live actions on the target since since, or "".
func otherCurrencyOnTarget(ctx context.Context, q store.Querier, tenantID, targetKey, currency string, since time.Time) (string, error) {
	var other string
	err := q.QueryRowContext(ctx, `SELECT currency FROM actions
		WHERE tenant_id = ? AND target_key = ? AND currency != ? AND amount_minor IS NOT NULL AND created_at >= ?
		AND status IN (?, ?, ?, ?) ORDER BY currency LIMIT 1`,
		tenantID, targetKey, currency, store.FormatTime(since),
		StatusPending, StatusApproved, StatusExecuting, StatusExecuted).Scan(&other)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("dual control: currencies on the same target: %w", err)
	}
	return other, nil
}

// windowText writes a window the way the tenant page sets it: "24 h",
// "7 days".
func windowText(d time.Duration) string {
	if d >= 48*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return fmt.Sprintf("%d h", d/time.Hour)
}

// OthersOnTarget lists, newest first and at most limit, the tenant's other
// actions of the same tool on the same target as a that are pending,
// approved, executing or executed, whenever they were created: what an
// approver should see before approving ("ORD-1002 was already refunded
// $54.00"). An action without a target has none.
func OthersOnTarget(ctx context.Context, q store.Querier, a Action, limit int) ([]Action, error) {
	out, err := store.Query(ctx, q, scan, selectAction+` WHERE tenant_id = ? AND tool = ? AND id != ? AND target_key != ''
		AND target_key = (SELECT target_key FROM actions WHERE id = ?)
		AND status IN (?, ?, ?, ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
		a.TenantID, a.Tool, a.ID, a.ID, StatusPending, StatusApproved, StatusExecuting, StatusExecuted, limit)
	if err != nil {
		return nil, fmt.Errorf("other actions on the target of %s: %w", a.ID, err)
	}
	return out, nil
}
