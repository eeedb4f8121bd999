package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// NotifyInfo is what notifications may say about a: what the queue shows
// an approver (Warden's headline, amount, tenant, expiry, approvals
// needed), never its arguments, targets or the agent's words.
func NotifyInfo(ctx context.Context, q store.Querier, a Action, tenantSlug string) (notify.ActionInfo, error) {
	if tenantSlug == "" {
		s, err := tenants.SlugOf(ctx, q, a.TenantID)
		if err != nil {
			return notify.ActionInfo{}, err
		}
		tenantSlug = s
	}
	info := notify.ActionInfo{ID: a.ID, TenantID: a.TenantID, TenantSlug: tenantSlug, Tool: a.Tool, Summary: a.Summary,
		AmountMinor: a.AmountMinor, ApprovalsRequired: a.ApprovalsRequired, ApprovalsGiven: a.ApprovalsGiven,
		ExpiresAt: a.ExpiresAt, CreatedAt: a.CreatedAt, OwnerID: a.KeyOwner}
	if amt, ok := a.Amount(); ok {
		info.Amount = money.Format(amt)
	}
	return info, nil
}

// notifyPending queues the messages of a new pending action in its
// transaction (notify sends them later, from the job queue), and, when
// its tenant has an escalation route, the job that escalates it if it is
// still undecided at the configured share of its lifetime (half unless
// changed on the Notifications page).
func notifyPending(ctx context.Context, tx *store.Tx, a Action, tenantSlug string) error {
	info, err := NotifyInfo(ctx, tx, a, tenantSlug)
	if err != nil {
		return err
	}
	escalateAt, remindAt, err := notify.ActionProposed(ctx, tx, info)
	if err != nil {
		return err
	}
	var later []jobs.Item
	if !escalateAt.IsZero() {
		later = append(later, jobs.Item{Kind: JobEscalate, Payload: EscalateJob{ActionID: a.ID}, Options: jobs.Options{UniqueKey: "escalate:" + a.ID, RunAt: escalateAt}})
	}
	if !remindAt.IsZero() {
		later = append(later, jobs.Item{Kind: JobRemind, Payload: EscalateJob{ActionID: a.ID}, Options: jobs.Options{UniqueKey: "remind:" + a.ID, RunAt: remindAt}})
	}
	return jobs.EnqueueMany(ctx, tx, later)
}

// JobRemind is the kind of the job that reminds the approvers of a
// pending action still undecided after the reminder wait; its payload is
// an EscalateJob.
const JobRemind = "remind_action"

// HandleRemind is JobRemind's handler: an action still pending is
// announced again to the routes that heard of it first.
func HandleRemind(db *store.DB, now func() time.Time) jobs.Handler {
	return whilePending(db, now, notify.ActionReminder)
}

// JobEscalate is the kind of the job that escalates a pending action
// still undecided part-way through its lifetime.
const JobEscalate = "escalate_action"

// EscalateJob is JobEscalate's payload.
type EscalateJob struct {
	ActionID string `json:"action_id"`
}

// HandleEscalate is JobEscalate's handler: an action still pending is
// announced to its tenant's escalation routes, in one transaction; a
// decided, expired or cancelled one escalates nothing.
func HandleEscalate(db *store.DB, now func() time.Time) jobs.Handler {
	return whilePending(db, now, notify.ActionEscalated)
}

// whilePending is a job handler that calls announce for an action still
// pending (and not yet expired) when the job runs, in one transaction.
func whilePending(db *store.DB, now func() time.Time, announce func(context.Context, *store.Tx, notify.ActionInfo, time.Time) error) jobs.Handler {
	return func(ctx context.Context, j jobs.Job) error {
		var p EscalateJob
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return &jobs.Permanent{Err: err}
		}
		return db.Transact(ctx, func(tx *store.Tx) error {
			a, err := Get(ctx, tx, p.ActionID)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil || a.Status != StatusPending || !now().Before(a.ExpiresAt) {
				return err
			}
			info, err := NotifyInfo(ctx, tx, a, "")
			if err != nil {
				return err
			}
			return announce(ctx, tx, info, now())
		})
	}
}

// notifyFailed queues the messages of an execution that failed for
// review.
func notifyFailed(ctx context.Context, tx *store.Tx, a Action, tenantSlug, reason string, now time.Time) error {
	info, err := NotifyInfo(ctx, tx, a, tenantSlug)
	if err != nil {
		return err
	}
	return notify.ReviewNeeded(ctx, tx, info, reason, now)
}
