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

// Take: an approver claims a pending action ("Bob is reviewing") so that
// others know it is being looked at. The claim is advisory — it locks
// nothing, and another approver may still decide the action — and it is
// released by its taker or by itself after the claim time (notify's
// Timing settings, 30 minutes unless changed): a claim past its expiry is
// simply no longer read as one, no job removes it.

// Claim is one approver's hold on a pending action.
type Claim struct {
	ActionID      string
	PrincipalID   string
	PrincipalName string
	TakenAt       time.Time
	ExpiresAt     time.Time
}

// ErrNotClaimed is a release of an action the principal does not hold.
var ErrNotClaimed = problem.Conflict("not_claimed", "You are not reviewing this action: there is nothing to release.")

// ClaimOf returns the action's claim still in force at now, or false.
func ClaimOf(ctx context.Context, q store.Querier, actionID string, now time.Time) (Claim, bool, error) {
	m, err := ClaimsOf(ctx, q, []string{actionID}, now)
	if err != nil {
		return Claim{}, false, err
	}
	c, ok := m[actionID]
	return c, ok, nil
}

// ClaimsOf returns the claims in force at now of the given actions, by
// action id.
func ClaimsOf(ctx context.Context, q store.Querier, ids []string, now time.Time) (map[string]Claim, error) {
	out := map[string]Claim{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{store.FormatTime(now)}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := store.Query(ctx, q, scanClaim, `SELECT action_id, principal_id, principal_name, taken_at, expires_at FROM action_claims
		WHERE expires_at > ? AND action_id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	for _, c := range rows {
		out[c.ActionID] = c
	}
	return out, nil
}

func scanClaim(s store.Scanner) (Claim, error) {
	var c Claim
	var taken, expires string
	if err := s.Scan(&c.ActionID, &c.PrincipalID, &c.PrincipalName, &taken, &expires); err != nil {
		return Claim{}, err
	}
	c.TakenAt, _ = time.Parse(time.RFC3339Nano, taken)
	c.ExpiresAt, _ = time.Parse(time.RFC3339Nano, expires)
	return c, nil
}

// MayTake reports whether p may take a (of tenant tenantSlug) at now:
// whether p may decide it (Check), approvedByP saying whether p already
// approved it. The queue offers Take only where this holds; Take itself
// checks again with every earlier approver.
func MayTake(p identity.Principal, a Action, tenantSlug string, approvedByP bool, now time.Time) bool {
	return !approvedByP && Check(p, a, tenantSlug, nil, a.PayloadDigest, now) == nil
}

// TakeResult says what Take did: the claim now in force and, when the
// action was held by someone else, who that was (the claim moves to the
// taker all the same: it is advisory).
type TakeResult struct {
	Claim    Claim
	Previous *Claim
}

// Take claims a pending action for p until the claim time passes. Only an
// approver who may decide the action may take it (Check, as Decide). Taking
// an action someone else holds takes it over and says from whom; taking
// one's own claim again renews it. Audited as action.taken; routes of
// EventAssigned hear "Bob is reviewing …", in the same transaction.
func Take(ctx context.Context, db *store.DB, p identity.Principal, actionID string, now time.Time) (TakeResult, error) {
	var res TakeResult
	err := db.Transact(ctx, func(tx *store.Tx) error {
		res = TakeResult{}
		a, err := lockForDecision(ctx, tx, actionID)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
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
		if err := Check(p, a, t, approvedBy, a.PayloadDigest, now); err != nil {
			return err
		}
		prev, held, err := ClaimOf(ctx, tx, a.ID, now)
		if err != nil {
			return err
		}
		if held && prev.PrincipalID != p.ID {
			res.Previous = &prev
		}
		hold, err := notify.ClaimTime(ctx, tx)
		if err != nil {
			return err
		}
		c := Claim{ActionID: a.ID, PrincipalID: p.ID, PrincipalName: p.DisplayName(), TakenAt: now, ExpiresAt: now.Add(hold)}
		if _, err := tx.ExecContext(ctx, `DELETE FROM action_claims WHERE action_id = ?`, a.ID); err != nil {
			return fmt.Errorf("take %s: %w", a.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO action_claims (action_id, principal_id, principal_name, taken_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			c.ActionID, c.PrincipalID, c.PrincipalName, store.FormatTime(c.TakenAt), store.FormatTime(c.ExpiresAt)); err != nil {
			return fmt.Errorf("take %s: %w", a.ID, err)
		}
		details := map[string]any{"until": store.FormatTime(c.ExpiresAt), "name": c.PrincipalName}
		if res.Previous != nil {
			details["from"] = res.Previous.PrincipalName
		}
		if _, err := audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: p.ID}, Tenant: t, Verb: "action.taken",
			Subject: audit.Subject{Type: "action", ID: a.ID}, Details: details}); err != nil {
			return err
		}
		if !held || res.Previous != nil { // a renewal tells nobody again
			info, err := NotifyInfo(ctx, tx, a, t)
			if err != nil {
				return err
			}
			// Routes naming the assignee e-mail the taker and, on a
			// take-over, the approver it was taken from.
			info.Assignees = []string{p.ID}
			if res.Previous != nil {
				info.Assignees = append(info.Assignees, res.Previous.PrincipalID)
			}
			if err := notify.ActionTaken(ctx, tx, info, c.PrincipalName, now); err != nil {
				return err
			}
		}
		res.Claim = c
		return nil
	})
	return res, err
}

// Release gives up p's claim on an action before it ends by itself;
// ErrNotClaimed when p holds none. Audited as action.released.
func Release(ctx context.Context, db *store.DB, p identity.Principal, actionID string, now time.Time) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		a, err := Get(ctx, tx, actionID)
		if err != nil {
			return err
		}
		t, err := tenants.SlugOf(ctx, tx, a.TenantID)
		if err != nil {
			return err
		}
		if !p.InTenant(t) {
			return ErrNotFound
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM action_claims WHERE action_id = ? AND principal_id = ? AND expires_at > ?`,
			a.ID, p.ID, store.FormatTime(now))
		if err != nil {
			return fmt.Errorf("release %s: %w", a.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotClaimed
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: p.ID}, Tenant: t, Verb: "action.released",
			Subject: audit.Subject{Type: "action", ID: a.ID}, Details: map[string]any{"name": p.DisplayName()}})
		return err
	})
}
