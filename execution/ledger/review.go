package ledger

import (
	"context"
	"strings"

	"github.com/wardenhq/warden/platform/store"
)

// CountNeedsReviewIn is CountNeedsReview limited to the tenants slugs
// (nil: every tenant), so on-call sees the unconfirmed effects of their
// own tenants only.
func CountNeedsReviewIn(ctx context.Context, q store.Querier, slugs []string) (int, error) {
	if slugs == nil {
		return CountNeedsReview(ctx, q)
	}
	if len(slugs) == 0 {
		return 0, nil
	}
	args := make([]any, 0, len(slugs))
	for _, s := range slugs {
		args = append(args, s)
	}
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM effects WHERE needs_review = 1 AND state = 'reserved'
		AND tenant IN (?`+strings.Repeat(",?", len(slugs)-1)+`)`, args...).Scan(&n)
	return n, err
}
