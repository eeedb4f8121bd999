package approvals

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/platform/store"
)

// Why an approved action's execution was blocked before anything was sent
// to the provider. The executor writes the failure with BlockedFailure;
// the action page reads it back with BlockOf, so that it can say exactly
// that (nothing was sent, nothing to check at the provider) and offer to
// retry once the block is lifted.
const (
	BlockToolOff      = "tool_off"
	BlockTenantFrozen = "tenant_frozen"
)

const blockedPrefix = "blocked before sending: "

// BlockedFailure is the failure recorded when execution was blocked
// before the provider call: BlockToolOff or BlockTenantFrozen.
func BlockedFailure(kind, tool string) string {
	if kind == BlockTenantFrozen {
		return blockedPrefix + "the tenant is frozen"
	}
	return blockedPrefix + "tool " + tool + " is switched off"
}

// BlockOf says why a failed action's execution was blocked before
// anything was sent, or "" when it failed otherwise (or did not fail).
func BlockOf(a Action) string {
	if a.Status != StatusFailed || !strings.HasPrefix(a.Failure, blockedPrefix) {
		return ""
	}
	if a.Failure == BlockedFailure(BlockTenantFrozen, a.Tool) {
		return BlockTenantFrozen
	}
	return BlockToolOff
}

// ApprovedBy reports which of the actions ids the principal has approved,
// so the queue can mark them rather than offer them again.
func ApprovedBy(ctx context.Context, q store.Querier, principalID string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 || principalID == "" {
		return out, nil
	}
	args := []any{principalID}
	for _, id := range ids {
		args = append(args, id)
	}
	got, err := store.Strings(ctx, q, `SELECT action_id FROM decisions WHERE principal_id = ? AND decision = 'approve' AND action_id IN (?`+
		strings.Repeat(",?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("approved by %s: %w", principalID, err)
	}
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}
