package approvals

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/platform/store"
)

// ReversalOf returns the compensating action that reverses the action id
// (the newest, should there be more than one), or store.ErrNotFound when
// nobody asked to reverse it.
func ReversalOf(ctx context.Context, q store.Querier, id string) (Action, error) {
	a, err := store.Get(ctx, q, scan, selectAction+` WHERE compensates = ? ORDER BY created_at DESC, id DESC LIMIT 1`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Action{}, err
	}
	if err != nil {
		return Action{}, fmt.Errorf("reversal of %s: %w", id, err)
	}
	return a, nil
}
