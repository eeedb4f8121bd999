package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// The statuses after approval, and who moves an action through them:
//
//	approved → executing        StartExecuting (the executor takes the job)
//	approved|executing → executed  Executed (the provider's receipt is recorded)
//	approved|executing → failed    Failed (needs review)
//	approved → executed|failed     AgentReported (an external agent's result)
//
// Every change is a compare-and-set on the status it leaves, so a retried
// or rescued job, or a second report, changes nothing twice; the status
// changes that end an action carry their audit event in the same
// transaction.

// ErrNotReportable means the action is not an approved action the agent
// executes itself, or its result was already reported.
var ErrNotReportable = problem.Conflict("not_reportable", "Only an approved action that the agent executes itself takes a result.")

// executor is the audit actor of what the background executor records.
var executor = audit.Actor{Type: audit.ActorSystem, ID: "executor"}

// StartExecuting moves an approved action to executing. It reports
// whether it did (false: it had already left approved). An action asking
// for more than is left of its target's total is refused with
// CodeExceedsRefundable and stays approved (checkExecution): the caller
// fails it without calling the provider.
func StartExecuting(ctx context.Context, db *store.DB, id string, now time.Time) (bool, error) {
	var changed bool
	err := db.Transact(ctx, func(tx *store.Tx) error {
		if err := checkExecution(ctx, tx, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE actions SET status = ?, updated_at = ? WHERE id = ? AND status = ?`,
			StatusExecuting, store.FormatTime(now), id, StatusApproved)
		if err != nil {
			return fmt.Errorf("start executing %s: %w", id, err)
		}
		n, _ := res.RowsAffected()
		changed = n == 1
		return nil
	})
	return changed, err
}

// Executed records the provider's receipt (already redacted) on an
// approved or executing action and marks it executed, with its audit
// event, inside tx. It reports false when the action had already left
// those statuses (a second completion changes nothing).
func Executed(ctx context.Context, tx *store.Tx, a Action, tenantSlug string, receipt json.RawMessage, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE actions SET status = ?, receipt = ?, executed_at = ?, updated_at = ?
		WHERE id = ? AND status IN (?, ?)`, StatusExecuted, string(receipt), store.FormatTime(now), store.FormatTime(now),
		a.ID, StatusApproved, StatusExecuting)
	if err != nil {
		return false, fmt.Errorf("record execution of %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	_, err = audit.Append(ctx, tx, audit.Event{Actor: executor, Tenant: tenantSlug, Verb: "action.executed",
		Subject: audit.Subject{Type: "action", ID: a.ID},
		Details: map[string]any{"idempotency_key": a.IdempotencyKey, "payload_digest": a.PayloadDigest, "receipt": receipt}})
	return err == nil, err
}

// Failed marks an approved or executing action failed for review, with
// the reason (already redacted) and its audit event, inside tx. It reports
// false when the action had already left those statuses.
func Failed(ctx context.Context, tx *store.Tx, a Action, tenantSlug, reason string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE actions SET status = ?, failure = ?, updated_at = ? WHERE id = ? AND status IN (?, ?)`,
		StatusFailed, reason, store.FormatTime(now), a.ID, StatusApproved, StatusExecuting)
	if err != nil {
		return false, fmt.Errorf("fail %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	_, err = audit.Append(ctx, tx, audit.Event{Actor: executor, Tenant: tenantSlug, Verb: "action.failed",
		Subject: audit.Subject{Type: "action", ID: a.ID}, Details: map[string]any{"reason": reason}})
	if err == nil {
		err = notifyFailed(ctx, tx, a, tenantSlug, reason, now)
	}
	return err == nil, err
}

// Report is an external agent's outcome of an approved action it executed
// itself; Receipt and Error are already redacted.
type Report struct {
	KeyID   string
	Status  string // StatusExecuted or StatusFailed
	Receipt json.RawMessage
	Error   string
}

// AgentReported records an external agent's result on its approved
// action, with the audit event, inside tx. ErrNotReportable when the
// action is not an approved external action of that key.
func AgentReported(ctx context.Context, tx *store.Tx, a Action, tenantSlug string, r Report, now time.Time) error {
	if a.KeyID != r.KeyID || !a.External || a.Status != StatusApproved || (r.Status != StatusExecuted && r.Status != StatusFailed) {
		return ErrNotReportable
	}
	res, err := tx.ExecContext(ctx, `UPDATE actions SET status = ?, receipt = ?, failure = ?, executed_at = ?, updated_at = ?
		WHERE id = ? AND status = ?`, r.Status, string(r.Receipt), r.Error, store.FormatTime(now), store.FormatTime(now), a.ID, StatusApproved)
	if err != nil {
		return fmt.Errorf("record the agent's result of %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrNotReportable
	}
	_, err = audit.Append(ctx, tx, audit.Event{
		Actor: audit.Actor{Type: audit.ActorKey, ID: r.KeyID}, Tenant: tenantSlug, Verb: "action." + r.Status,
		Subject: audit.Subject{Type: "action", ID: a.ID},
		Details: map[string]any{"reported_by": "agent", "payload_digest": a.PayloadDigest, "error": r.Error},
	})
	return err
}

// Reserve records the budget an approved action reserved for its
// execution, inside tx.
func Reserve(ctx context.Context, tx *store.Tx, id string, micros int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE actions SET reserved_micros = ? WHERE id = ?`, micros, id); err != nil {
		return fmt.Errorf("reserve for %s: %w", id, err)
	}
	return nil
}

// TakeReserved returns what an action reserved and clears it, inside tx,
// so that the reservation is settled once.
func TakeReserved(ctx context.Context, tx *store.Tx, id string) (int64, error) {
	var reserved int64
	if err := tx.QueryRowContext(ctx, `SELECT reserved_micros FROM actions WHERE id = ?`, id).Scan(&reserved); err != nil {
		return 0, fmt.Errorf("reservation of %s: %w", id, err)
	}
	if reserved == 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE actions SET reserved_micros = 0 WHERE id = ?`, id); err != nil {
		return 0, fmt.Errorf("reservation of %s: %w", id, err)
	}
	return reserved, nil
}

// Executing lists, oldest first and at most limit, the actions that have
// been executing since before without a change: those whose replica died
// (or whose completion failed) while they ran. The reconciler finishes
// those whose effect the ledger recorded.
func Executing(ctx context.Context, q store.Querier, before time.Time, limit int) ([]Action, error) {
	out, err := store.Query(ctx, q, scan, selectAction+` WHERE status = ? AND updated_at <= ? ORDER BY created_at, id LIMIT ?`,
		StatusExecuting, store.FormatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("list executing actions: %w", err)
	}
	return out, nil
}

// ByIdempotencyKey loads the action with that idempotency key, or
// store.ErrNotFound.
func ByIdempotencyKey(ctx context.Context, q store.Querier, key string) (Action, error) {
	a, err := store.Get(ctx, q, scan, selectAction+` WHERE idempotency_key = ?`, key)
	if errors.Is(err, store.ErrNotFound) {
		return Action{}, err
	}
	return a, err
}

// Retry moves a failed action back to approved, inside tx, with its
// "action.retried" event, so its execution can run again under the same
// idempotency key. Whether that is safe (the effect never reached the
// provider) is the caller's question: see runtime.RetryFailed. It
// reports false when the action was no longer failed.
func Retry(ctx context.Context, tx *store.Tx, a Action, tenantSlug string, actor audit.Actor, reason string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE actions SET status = ?, failure = '', updated_at = ? WHERE id = ? AND status = ?`,
		StatusApproved, store.FormatTime(now), a.ID, StatusFailed)
	if err != nil {
		return false, fmt.Errorf("retry %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Tenant: tenantSlug, Verb: "action.retried",
		Subject: audit.Subject{Type: "action", ID: a.ID},
		Details: map[string]any{"idempotency_key": a.IdempotencyKey, "failure": a.Failure, "reason": reason}})
	return err == nil, err
}

// FailedIDs lists a tenant's failed actions of one tool, oldest first.
func FailedIDs(ctx context.Context, q store.Querier, tenantID, tool string) ([]string, error) {
	out, err := store.Strings(ctx, q, `SELECT id FROM actions WHERE status = 'failed' AND tenant_id = ? AND tool = ? ORDER BY created_at, id`, tenantID, tool)
	if err != nil {
		return nil, fmt.Errorf("failed actions of %s: %w", tenantID, err)
	}
	return out, nil
}

// RecordCharge records, in tx, what an action outside any journey cost
// when it was charged to its tenant's budget (the Budgets page itemises
// it).
func RecordCharge(ctx context.Context, tx *store.Tx, id string, micros int64, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE actions SET cost_micros = ?, charged_at = ? WHERE id = ?`, micros, store.FormatTime(at), id); err != nil {
		return fmt.Errorf("charge of %s: %w", id, err)
	}
	return nil
}

// ChargedSince sums what the tenant's actions outside journeys were
// charged since, and counts them. An action a journey proposed is left
// out: its cost is part of its journey's (a model-driven journey's
// approved call is charged on its own reservation and added to the
// journey's cost), so counting it here would count it twice. It reads
// every charge of the period: the Budgets page reads budgets.SpendSince,
// the running totals, which the tests check against this.
func ChargedSince(ctx context.Context, q store.Querier, tenantID string, since time.Time) (micros int64, n int, err error) {
	err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_micros), 0), COUNT(*) FROM actions
		WHERE tenant_id = ? AND charged_at >= ? AND journey_id = ''`, tenantID, store.FormatTime(since)).Scan(&micros, &n)
	if err != nil {
		return 0, 0, fmt.Errorf("action charges: %w", err)
	}
	return micros, n, nil
}
