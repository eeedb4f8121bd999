package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// CodeExceedsRefundable refuses an action whose amount is more than what
// is left of its target's total (400).
const CodeExceedsRefundable = "exceeds_refundable"

// Refunded is how much of a target's total a tenant's actions of one tool
// (a refund tool on an order) have taken: what a second refund of the same
// order must be weighed against. The dual-control window is not enough for
// that — a refund executed last month still took its money — so every
// action counts, whenever it was created, until a reversal of it executed.
type Refunded struct {
	Label string // the target as people read it: "ORD-1004"
	// Total is the target's total where Warden knows it: what the call's
	// own total argument declared (tools.Tool TotalArg) or what a lookup
	// of the target answered (RecordTotal), the smaller when both.
	Total *money.Amount
	Done  money.Amount // executed and not reversed
	Live  money.Amount // pending, approved or executing: not done yet, but asked for
}

// Left is what remains of the total once what was done and what is asked
// for are taken, never below zero; zero when the total is unknown.
func (r Refunded) Left() money.Amount {
	if r.Total == nil {
		return money.Amount{Currency: r.Done.Currency}
	}
	return money.Amount{Minor: max(r.Total.Minor-r.Done.Minor-r.Live.Minor, 0), Currency: r.Total.Currency}
}

// Sentence is the line the action page shows approvers: "Already
// refunded $2,400.00 of $2,400.00 on ORD-1004.", with what other actions
// still ask for, or that the total is unknown.
func (r Refunded) Sentence() string {
	s := "Already refunded " + money.Format(r.Done)
	if r.Total != nil {
		s += " of " + money.Format(*r.Total)
	}
	s += " on " + r.Label + "."
	if r.Live.Minor > 0 {
		s += " Other actions awaiting approval or running ask for " + money.Format(r.Live) + " more."
	}
	if r.Total == nil {
		s += " Its total is not known to Warden (no lookup recorded it), so what is left is not checked."
	}
	return s
}

// refusal is the exceeds_refundable refusal of asking for amount.
func (r Refunded) refusal(amount money.Amount) *problem.Error {
	s := fmt.Sprintf("%s has %s left to refund: %s of %s was already refunded", r.Label, money.Format(r.Left()), money.Format(r.Done), money.Format(*r.Total))
	if r.Live.Minor > 0 {
		s += fmt.Sprintf(" and %s more is approved or running", money.Format(r.Live))
	}
	s += fmt.Sprintf(". This asks for %s.", money.Format(amount))
	return problem.Invalid(CodeExceedsRefundable, s).Titled("More than is left to refund")
}

// ExceedsRefundable reports the exceeds_refundable refusal in err, if any.
func ExceedsRefundable(err error) (*problem.Error, bool) {
	var p *problem.Error
	if errors.As(err, &p) && p.Code == CodeExceedsRefundable {
		return p, true
	}
	return nil, false
}

// RecordTotal keeps what a lookup of a tenant's target answered as its
// total (an order's amount), replacing an earlier answer: the newest
// lookup is the provider's latest word. Tool names the lookup.
func RecordTotal(ctx context.Context, tx *store.Tx, tenantID string, target Target, total money.Amount, tool string, now time.Time) error {
	if target.Key == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO target_totals (tenant_id, target_key, currency, total_minor, tool, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, target_key) DO UPDATE SET currency = excluded.currency, total_minor = excluded.total_minor,
			tool = excluded.tool, recorded_at = excluded.recorded_at`,
		tenantID, target.Key, total.Currency.Code, total.Minor, tool, store.FormatTime(now))
	if err != nil {
		return fmt.Errorf("record the total of %s: %w", target.Label, err)
	}
	return nil
}

// onTarget is one action's place among its target's: what refunded() needs.
type onTarget struct {
	id, tenantID, tool, targetKey, label, idempotencyKey string
	amount                                               money.Amount
	declared                                             *int64 // the action's own total argument
}

// total resolves a target's total in the action's currency: the declared
// one and the recorded one, the smaller when both. A total known only in
// another currency cannot be weighed against the amount: it is reported
// as a refusal, since refunding in another currency than the order's is
// not a way around what is left.
func (o onTarget) total(ctx context.Context, q store.Querier) (*money.Amount, error) {
	var total *money.Amount
	if o.declared != nil {
		total = &money.Amount{Minor: *o.declared, Currency: o.amount.Currency}
	}
	var code string
	var minor int64
	err := q.QueryRowContext(ctx, `SELECT currency, total_minor FROM target_totals WHERE tenant_id = ? AND target_key = ?`,
		o.tenantID, o.targetKey).Scan(&code, &minor)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return total, nil
	case err != nil:
		return nil, fmt.Errorf("the total of %s: %w", o.label, err)
	case code != o.amount.Currency.Code:
		return nil, problem.Invalid(CodeExceedsRefundable, fmt.Sprintf("%s was paid in %s and this asks for %s: what is left to refund is in %s.",
			o.label, code, money.Format(o.amount), code)).Titled("More than is left to refund")
	}
	if total == nil || minor < total.Minor {
		total = &money.Amount{Minor: minor, Currency: o.amount.Currency}
	}
	return total, nil
}

// refunded adds up the tenant's other actions of o's tool on o's target
// in o's currency, by status, leaving out those a reversal undid.
// liveStatuses are the statuses counted as asked for.
func (o onTarget) refunded(ctx context.Context, q store.Querier, liveStatuses ...string) (Refunded, error) {
	r := Refunded{Label: o.label, Done: money.Amount{Currency: o.amount.Currency}, Live: money.Amount{Currency: o.amount.Currency}}
	rows, err := q.QueryContext(ctx, `SELECT a.status, COALESCE(SUM(a.amount_minor), 0) FROM actions a
		WHERE a.tenant_id = ? AND a.tool = ? AND a.target_key = ? AND a.currency = ? AND a.id != ? AND a.idempotency_key != ?
		AND a.amount_minor IS NOT NULL AND a.status IN (?, ?, ?, ?)
		AND NOT EXISTS (SELECT 1 FROM actions r WHERE r.compensates = a.id AND r.status = ?)
		GROUP BY a.status`,
		o.tenantID, o.tool, o.targetKey, o.amount.Currency.Code, o.id, o.idempotencyKey,
		StatusPending, StatusApproved, StatusExecuting, StatusExecuted, StatusExecuted)
	if err != nil {
		return Refunded{}, fmt.Errorf("refunded on %s: %w", o.label, err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var sum int64
		if err := rows.Scan(&status, &sum); err != nil {
			return Refunded{}, fmt.Errorf("refunded on %s: %w", o.label, err)
		}
		switch {
		case status == StatusExecuted:
			r.Done.Minor += sum
		case contains(liveStatuses, status):
			r.Live.Minor += sum
		}
	}
	if err := rows.Err(); err != nil {
		return Refunded{}, fmt.Errorf("refunded on %s: %w", o.label, err)
	}
	return r, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// check refuses o when its amount is more than what is left of its
// target's total, counting as taken the other actions in liveStatuses.
// An action whose target has no known total passes. The caller holds
// the target's lock (lockTarget).
func (o onTarget) check(ctx context.Context, tx *store.Tx, liveStatuses ...string) error {
	total, err := o.total(ctx, tx)
	if err != nil || total == nil {
		return err
	}
	r, err := o.refunded(ctx, tx, liveStatuses...)
	if err != nil {
		return err
	}
	r.Total = total
	if o.amount.Minor > r.Left().Minor {
		return r.refusal(o.amount)
	}
	return nil
}

// checkProposal is Create's half of the rule, inside the creating
// transaction and under the target's lock: a new action may ask for at
// most what is left once executed actions and approved or executing ones
// (they are about to take their share) are taken. Pending ones are not
// taken: they may yet be rejected, and the approvers of each see the
// others (Refundable); if more of them are approved than the total
// allows, the execution check lets only what fits run. A reversal (it
// gives money back) and an action without an amount or a target are not
// weighed.
func checkProposal(ctx context.Context, tx *store.Tx, s Spec, idempotencyKey string) error {
	if !weighed(s) {
		return nil
	}
	c, err := money.ParseCurrency(s.Currency)
	if err != nil {
		return nil // Create's callers refuse unknown currencies before this
	}
	if err := lockTarget(ctx, tx, s.TenantID, s.Target.Key); err != nil {
		return err
	}
	o := onTarget{tenantID: s.TenantID, tool: s.Tool.Name, targetKey: s.Target.Key, label: s.Target.Label,
		idempotencyKey: idempotencyKey, amount: money.Amount{Minor: *s.AmountMinor, Currency: c}}
	if s.Total != nil {
		o.declared = &s.Total.Minor
	}
	return o.check(ctx, tx, StatusApproved, StatusExecuting)
}

// weighed reports whether an action is weighed against what is left of
// its target: its tool declares the amount, it has a target, and it is
// not a reversal.
func weighed(s Spec) bool {
	return s.Tool.DeclaresAmount && s.AmountMinor != nil && s.Target.Key != "" && s.Compensates == ""
}

// checkExecution is StartExecuting's half, inside the transaction that
// moves the action to executing and under the target's lock: once
// approved, an action runs only if its amount still fits in what is left
// after executed and executing actions — the total may have become known,
// or smaller, since it was proposed. Pending and approved siblings are
// not counted here: whichever starts first takes what is left.
func checkExecution(ctx context.Context, tx *store.Tx, id string) error {
	var o onTarget
	var amount, declared sql.NullInt64
	var currency, status string
	var weigh bool
	err := tx.QueryRowContext(ctx, `SELECT tenant_id, tool, target_key, target_label, idempotency_key, amount_minor, currency,
		total_minor, status, weigh_refundable FROM actions WHERE id = ?`, id).
		Scan(&o.tenantID, &o.tool, &o.targetKey, &o.label, &o.idempotencyKey, &amount, &currency, &declared, &status, &weigh)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // StartExecuting's update finds nothing either
	}
	if err != nil {
		return fmt.Errorf("what is left to refund for %s: %w", id, err)
	}
	if status != StatusApproved || !weigh || !amount.Valid || o.targetKey == "" {
		return nil
	}
	c, err := money.ParseCurrency(currency)
	if err != nil {
		return nil
	}
	o.id, o.amount = id, money.Amount{Minor: amount.Int64, Currency: c}
	if declared.Valid {
		o.declared = &declared.Int64
	}
	if err := lockTarget(ctx, tx, o.tenantID, o.targetKey); err != nil {
		return err
	}
	return o.check(ctx, tx, StatusExecuting)
}

// Refundable is what the action page shows approvers of a's target: what
// other actions of its tool already refunded and ask for, against the
// target's total. ok is false for an action that is not weighed (its
// tool declares no amount, it has no target, it is a reversal).
func Refundable(ctx context.Context, q store.Querier, a Action) (r Refunded, ok bool, err error) {
	amount, has := a.Amount()
	if !has || a.Compensates != "" {
		return Refunded{}, false, nil
	}
	var key string
	var declared sql.NullInt64
	var weigh bool
	err = q.QueryRowContext(ctx, `SELECT target_key, total_minor, weigh_refundable FROM actions WHERE id = ?`, a.ID).Scan(&key, &declared, &weigh)
	if err != nil {
		return Refunded{}, false, fmt.Errorf("what is left to refund for %s: %w", a.ID, err)
	}
	if key == "" || !weigh {
		return Refunded{}, false, nil
	}
	o := onTarget{id: a.ID, tenantID: a.TenantID, tool: a.Tool, targetKey: key, label: a.TargetLabel,
		idempotencyKey: a.IdempotencyKey, amount: amount}
	if declared.Valid {
		o.declared = &declared.Int64
	}
	total, err := o.total(ctx, q)
	if _, mismatch := ExceedsRefundable(err); mismatch {
		total, err = nil, nil
	}
	if err != nil {
		return Refunded{}, false, err
	}
	r, err = o.refunded(ctx, q, StatusPending, StatusApproved, StatusExecuting)
	if err != nil {
		return Refunded{}, false, err
	}
	r.Total = total
	return r, true, nil
}
