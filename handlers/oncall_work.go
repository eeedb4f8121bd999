package handlers

import (
	"context"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// failedPageSize is how many failed actions one page of the status page
// lists.
const failedPageSize = 20

// oncallReview is what on-call must look at in the viewer's tenants: one
// page of failed actions (scoped in the query, so a page never fills up
// with other tenants' failures) and how many effects could not be
// confirmed with their provider.
type oncallReview struct {
	Failed      store.Paged[approvals.Row]
	FailedTotal int
	Effects     int
}

func reviewFor(ctx context.Context, db *store.DB, user *identity.Principal, page store.Page) (oncallReview, error) {
	var r oncallReview
	scope, ids, err := tenantScope(ctx, db, user, "")
	if err != nil {
		return r, err
	}
	if r.Failed, r.FailedTotal, err = approvals.FailedPage(ctx, db.Read(), ids, page); err != nil {
		return r, err
	}
	var slugs []string
	if ids != nil {
		slugs = []string{}
		for _, t := range scope {
			slugs = append(slugs, t.Slug)
		}
	}
	r.Effects, err = ledger.CountNeedsReviewIn(ctx, db.Read(), slugs)
	return r, err
}

// reviewItems are failed actions as the pages list them.
func reviewItems(rows []approvals.Row) []views.ReviewItem {
	out := make([]views.ReviewItem, 0, len(rows))
	for _, r := range rows {
		out = append(out, views.ReviewItem{ID: r.ID, Summary: r.Summary, Tenant: r.TenantSlug, Reason: r.Failure, RequestedAt: r.CreatedAt})
	}
	return out
}
