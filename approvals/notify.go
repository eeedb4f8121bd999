package approvals

import (
	"context"
	"time"

	"github.com/wardenhq/warden/notify"
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
		ExpiresAt: a.ExpiresAt, CreatedAt: a.CreatedAt}
	if amt, ok := a.Amount(); ok {
		info.Amount = money.Format(amt)
	}
	return info, nil
}

// notifyPending queues the messages of a new pending action in its
// transaction (notify sends them later, from the job queue).
func notifyPending(ctx context.Context, tx *store.Tx, a Action, tenantSlug string) error {
	info, err := NotifyInfo(ctx, tx, a, tenantSlug)
	if err != nil {
		return err
	}
	return notify.ActionPending(ctx, tx, info)
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
