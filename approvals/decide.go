package approvals

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// Decided is one approver's recorded decision.
type Decided struct {
	PrincipalID   string
	PrincipalName string
	Decision      string
	Comment       string
	At            time.Time
}

// Decisions returns an action's decisions, oldest first.
func Decisions(ctx context.Context, q store.Querier, actionID string) ([]Decided, error) {
	out, err := store.Query(ctx, q, scanDecided, `SELECT principal_id, principal_name, decision, comment, created_at FROM decisions
		WHERE action_id = ? ORDER BY created_at, id`, actionID)
	if err != nil {
		return nil, fmt.Errorf("decisions of %s: %w", actionID, err)
	}
	return out, nil
}

func scanDecided(s store.Scanner) (Decided, error) {
	var d Decided
	var at string
	if err := s.Scan(&d.PrincipalID, &d.PrincipalName, &d.Decision, &d.Comment, &at); err != nil {
		return Decided{}, err
	}
	d.At, _ = time.Parse(time.RFC3339Nano, at)
	return d, nil
}

// OnDecided runs inside the transaction of a final decision (the action's
// Status says which: approved, rejected, expired or cancelled): it is where
// the execution job, the ledger record, the agent's callback and the end
// of the waiting journey are written, so the decision and the work it
// causes exist together or not at all.
type OnDecided func(ctx context.Context, tx *store.Tx, a Action) error

// Request is one decision.
type Request struct {
	Principal identity.Principal
	ActionID  string
	Decision  string // Approve or Reject
	Comment   string // required to reject
	Digest    string // the payload digest the approver saw
}

// Result says what the decision did.
type Result struct {
	Action Action
	// Final is true when the action left pending (approved or rejected).
	Final bool
}

// Decide records a decision in one transaction with its audit event.
// Decisions on one action take turns: the action's row is locked before it
// is read (lockForDecision), so each decision sees the ones before it. Of
// two approvers racing on a one-approver action exactly one outcome is
// recorded and the other gets ErrAlreadyDecided; two different approvers
// racing on a two-approver action both count; the same approver sending
// one approval twice at once counts once (the second gets
// ErrAlreadyApproved, or ErrAlreadyDecided if the first was final). The
// status change stays a compare-and-set on the pending status. On the
// final decision (approval or rejection), onDecided runs in the same
// transaction.
func Decide(ctx context.Context, db *store.DB, req Request, onDecided OnDecided, now time.Time) (Result, error) {
	req.Comment = strings.TrimSpace(req.Comment)
	if req.Decision != Approve && req.Decision != Reject {
		return Result{}, problem.Invalid("unknown_decision", "Choose approve or reject.")
	}
	if req.Decision == Reject && req.Comment == "" {
		return Result{}, ErrReasonRequired
	}
	if len(req.Comment) > MaxCommentLen {
		return Result{}, ErrCommentTooLong
	}
	var res Result
	err := db.Transact(ctx, func(tx *store.Tx) error {
		res = Result{} // a retried run starts afresh (store.Transact)
		a, err := lockForDecision(ctx, tx, req.ActionID)
		if err != nil {
			return err
		}
		t, err := tenants.SlugOf(ctx, tx, a.TenantID)
		if err != nil {
			return err
		}
		approvedBy, err := Approvers(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		if err := Check(req.Principal, a, t, approvedBy, req.Digest, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO decisions (id, action_id, principal_id, principal_name, decision, comment, payload_digest, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, store.NewID(), a.ID, req.Principal.ID, req.Principal.DisplayName(), req.Decision,
			req.Comment, req.Digest, store.FormatTime(now)); err != nil {
			return fmt.Errorf("record decision: %w", err)
		}
		verb := "action.rejected"
		details := map[string]any{"payload_digest": a.PayloadDigest, "comment": req.Comment}
		if a.AmountMinor != nil {
			// The amount decided on, so that an export's row of a
			// decision reads "2400.00 USD" beside the approver's name.
			details["amount_minor"], details["currency"] = *a.AmountMinor, a.Currency
		}
		switch {
		case req.Decision == Reject:
			if err := casStatus(ctx, tx, a, StatusRejected, a.ApprovalsGiven, now); err != nil {
				return err
			}
			a.Status, res.Final = StatusRejected, true
			if onDecided != nil {
				if err := onDecided(ctx, tx, a); err != nil {
					return err
				}
			}
		case a.ApprovalsGiven+1 >= a.ApprovalsRequired:
			if err := casStatus(ctx, tx, a, StatusApproved, a.ApprovalsGiven+1, now); err != nil {
				return err
			}
			a.Status, a.ApprovalsGiven, res.Final = StatusApproved, a.ApprovalsGiven+1, true
			verb = "action.approved"
			if onDecided != nil {
				if err := onDecided(ctx, tx, a); err != nil {
					return err
				}
			}
		default:
			if err := casStatus(ctx, tx, a, StatusPending, a.ApprovalsGiven+1, now); err != nil {
				return err
			}
			a.ApprovalsGiven++
			verb = "action.approval_recorded"
		}
		details["approvals"] = fmt.Sprintf("%d of %d", a.ApprovalsGiven, a.ApprovalsRequired)
		if _, err := audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorPrincipal, ID: req.Principal.ID}, Tenant: t, Verb: verb,
			Subject: audit.Subject{Type: "action", ID: a.ID}, Details: details,
		}); err != nil {
			return err
		}
		res.Action = a
		return nil
	})
	if err == nil && res.Final {
		traceDecided(ctx, res.Action, now) // tracing.go
	}
	return res, err
}

// lockForDecision loads an action for a decision and, on PostgreSQL,
// locks its row until tx ends, so that concurrent decisions on it take
// turns. Without it, READ COMMITTED lets two decisions read the same
// state: the same approval sent six times at once reached the decisions
// insert six times (a unique violation, answered 500), and a second
// approver racing the first on a two-approver action lost the
// compare-and-set although both approvals should count. FOR NO KEY UPDATE
// is the lock the status update takes anyway (the action row comes first
// in the lock order: action → budget → audit), and it does not block the
// inserts that reference the action. On SQLite BEGIN IMMEDIATE already
// admits one writer.
func lockForDecision(ctx context.Context, tx *store.Tx, id string) (Action, error) {
	q := selectAction + ` WHERE id = ?`
	if tx.Dialect() == store.Postgres {
		q += ` FOR NO KEY UPDATE`
	}
	a, err := store.Get(ctx, tx, scan, q, id)
	if errors.Is(err, store.ErrNotFound) {
		return Action{}, err
	}
	if err != nil {
		return Action{}, fmt.Errorf("lock action %s: %w", id, err)
	}
	return a, nil
}

// casStatus moves a pending action on, only if nobody else did first.
func casStatus(ctx context.Context, tx *store.Tx, a Action, status string, given int, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE actions SET status = ?, approvals_given = ?, updated_at = ?,
		decided_at = CASE WHEN ? != 'pending' THEN ? ELSE decided_at END
		WHERE id = ? AND status = 'pending' AND approvals_given = ?`,
		status, given, store.FormatTime(now), status, store.FormatTime(now), a.ID, a.ApprovalsGiven)
	if err != nil {
		return fmt.Errorf("decide %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrAlreadyDecided
	}
	return nil
}

func approvers(ctx context.Context, q store.Querier, actionID string) ([]string, error) {
	return store.Strings(ctx, q, `SELECT principal_id FROM decisions WHERE action_id = ? AND decision = 'approve'`, actionID)
}

// Expire marks pending actions past their expiry as expired, ends their
// journeys, and audits each; it returns how many expired.
func Expire(ctx context.Context, db *store.DB, onExpired OnDecided, now time.Time) (int, error) {
	var n int
	err := db.Transact(ctx, func(tx *store.Tx) error {
		due, err := pendingWhere(ctx, tx, `expires_at <= ? LIMIT 500`, store.FormatTime(now))
		if err != nil {
			return err
		}
		n, err = expire(ctx, tx, due, audit.Actor{Type: audit.ActorSystem, ID: "expiry"}, "", onExpired, now)
		return err
	})
	return n, err
}

// ErrNotDue is ExpireDue's answer for an action still pending whose
// expiry has not come yet (a clock behind another replica's).
var ErrNotDue = errors.New("the action's expiry has not come yet")

// ExpireDue expires one action at its expiry, as Expire would: it
// reports false, changing nothing, when the action is no longer pending,
// and ErrNotDue when its expiry is still ahead of now.
func ExpireDue(ctx context.Context, db *store.DB, id string, onExpired OnDecided, now time.Time) (bool, error) {
	var n int
	err := db.Transact(ctx, func(tx *store.Tx) error {
		due, err := pendingWhere(ctx, tx, `id = ?`, id)
		if err != nil || len(due) == 0 {
			return err
		}
		if due[0].ExpiresAt.After(now) {
			return fmt.Errorf("%w: %s expires at %s", ErrNotDue, id, store.FormatTime(due[0].ExpiresAt))
		}
		n, err = expire(ctx, tx, due, audit.Actor{Type: audit.ActorSystem, ID: "expiry"}, "", onExpired, now)
		return err
	})
	return n > 0, err
}

// ExpireNow expires the given actions that are still pending, now, in one
// transaction: each with its action.expired event (by actor, with the
// reason) and onExpired, so the journeys that waited for them end. Ids
// that are no longer pending are skipped; it returns how many expired.
func ExpireNow(ctx context.Context, db *store.DB, ids []string, actor audit.Actor, reason string, onExpired OnDecided, now time.Time) (int, error) {
	var n int
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var due []Action
		for _, id := range ids {
			a, err := Get(ctx, tx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if a.Status == StatusPending {
				due = append(due, a)
			}
		}
		var err error
		n, err = expire(ctx, tx, due, actor, reason, onExpired, now)
		return err
	})
	return n, err
}

// PendingIDs lists a tenant's pending actions, of one tool when tool is
// not empty, oldest first.
func PendingIDs(ctx context.Context, q store.Querier, tenantID, tool string) ([]string, error) {
	out, err := store.Strings(ctx, q, `SELECT id FROM actions WHERE status = 'pending' AND tenant_id = ? AND (? = '' OR tool = ?) ORDER BY created_at, id`,
		tenantID, tool, tool)
	if err != nil {
		return nil, fmt.Errorf("pending actions of %s: %w", tenantID, err)
	}
	return out, nil
}

func pendingWhere(ctx context.Context, tx *store.Tx, where string, args ...any) ([]Action, error) {
	due, err := store.Query(ctx, tx, scan, selectAction+` WHERE status = 'pending' AND `+where, args...)
	if err != nil {
		return nil, err
	}
	return due, nil
}

func expire(ctx context.Context, tx *store.Tx, due []Action, actor audit.Actor, reason string, onExpired OnDecided, now time.Time) (int, error) {
	n := 0
	for _, a := range due {
		if err := casStatus(ctx, tx, a, StatusExpired, a.ApprovalsGiven, now); err != nil {
			return n, err
		}
		a.Status = StatusExpired
		if onExpired != nil {
			if err := onExpired(ctx, tx, a); err != nil {
				return n, err
			}
		}
		t, _ := tenants.SlugOf(ctx, tx, a.TenantID)
		if reason == "" { // at its expiry, not expired by hand (ExpireNow)
			info, err := NotifyInfo(ctx, tx, a, t)
			if err != nil {
				return n, err
			}
			if err := notify.ActionExpired(ctx, tx, info, now); err != nil {
				return n, err
			}
		}
		details := map[string]any{"expired_at": store.FormatTime(a.ExpiresAt), "approvals": fmt.Sprintf("%d of %d", a.ApprovalsGiven, a.ApprovalsRequired)}
		if reason != "" {
			details["expired_at"], details["reason"] = store.FormatTime(now), reason
		}
		if _, err := audit.Append(ctx, tx, audit.Event{
			Actor: actor, Tenant: t, Verb: "action.expired",
			Subject: audit.Subject{Type: "action", ID: a.ID}, Details: details,
		}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Cancel withdraws a pending action on behalf of the key that requested
// it.
func Cancel(ctx context.Context, db *store.DB, actionID, keyID string, onDecided OnDecided, now time.Time) (Action, error) {
	var a Action
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = Get(ctx, tx, actionID); err != nil {
			return err
		}
		if a.KeyID != keyID {
			return ErrNotFound // another key's action is not this caller's to know of
		}
		if a.Status != StatusPending {
			return ErrAlreadyDecided
		}
		if err := casStatus(ctx, tx, a, StatusCancelled, a.ApprovalsGiven, now); err != nil {
			return err
		}
		if onDecided != nil {
			a.Status = StatusCancelled
			if err := onDecided(ctx, tx, a); err != nil {
				return err
			}
		}
		t, _ := tenants.SlugOf(ctx, tx, a.TenantID)
		a.Status = StatusCancelled
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorKey, ID: keyID}, Tenant: t, Verb: "action.cancelled",
			Subject: audit.Subject{Type: "action", ID: a.ID}, Details: map[string]any{"payload_digest": a.PayloadDigest},
		})
		return err
	})
	return a, err
}
