package alerts

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// Severity is how urgent an alert of kind is, for notification routes:
// failures and budgets running out page (critical); slowness and model
// overruns warn.
func Severity(kind string) string {
	switch kind {
	case FailureRate, BudgetBurn:
		return "critical"
	}
	return "warning"
}

// notifyChange queues the messages of an alert that fired or resolved, in
// its transaction (notify sends them later, from the job queue).
func notifyChange(ctx context.Context, tx *store.Tx, a Alert) error {
	info := notify.AlertInfo{ID: a.ID, Kind: a.Kind, Subject: a.Subject, TenantSlug: a.Tenant, Severity: Severity(a.Kind),
		What: a.What(), Value: fmt.Sprintf("%d%s (threshold %d%s)", a.Value, a.Unit(), a.Threshold, a.Unit()),
		FiredAt: a.FiredAt, Resolved: a.Resolved}
	if a.Runbook() != "" {
		info.Runbook = a.RunbookURL()
	}
	if a.Kind == BudgetBurn {
		info.TenantID = a.Subject
		if info.TenantSlug == "" {
			if slug, err := tenants.SlugOf(ctx, tx, a.Subject); err == nil {
				info.TenantSlug = slug
			}
		}
	}
	return notify.AlertChanged(ctx, tx, info)
}
