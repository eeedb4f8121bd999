package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/platform/store"
)

// ReversalOf returns the compensating action that reverses the action id
// (the newest, should there be more than one), or store.ErrNotFound when
// nobody asked to reverse it.
func ReversalOf(ctx context.Context, q store.Querier, id string) (Action, error) {
	a, err := scan(q.QueryRowContext(ctx, selectAction+` WHERE compensates = ? ORDER BY created_at DESC, id DESC LIMIT 1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Action{}, store.ErrNotFound
	}
	if err != nil {
		return Action{}, fmt.Errorf("reversal of %s: %w", id, err)
	}
	return a, nil
}
