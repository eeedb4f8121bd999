package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// SwitchState is a tool's kill switch as it stands: on or off, and the
// last press's reason, who pressed it ("principal:<id>", "system:…") and
// when. Tools never switched since they were added have no reason or time.
type SwitchState struct {
	Enabled bool
	Reason  string
	By      string
	At      *time.Time
}

// SwitchOf reads a tool's switch, or store.ErrNotFound.
func SwitchOf(ctx context.Context, q store.Querier, name string) (SwitchState, error) {
	var s SwitchState
	var at string
	err := q.QueryRowContext(ctx, `SELECT enabled, switch_reason, switched_by, switched_at FROM tools WHERE name = ?`, name).
		Scan(&s.Enabled, &s.Reason, &s.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return SwitchState{}, store.ErrNotFound
	}
	if err != nil {
		return SwitchState{}, fmt.Errorf("switch of %s: %w", name, err)
	}
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil && at != "" {
		s.At = &t
	}
	return s, nil
}

// SwitchStates reads every tool's switch, by tool name.
func SwitchStates(ctx context.Context, q store.Querier) (map[string]SwitchState, error) {
	type named struct {
		name string
		s    SwitchState
	}
	all, err := store.Query(ctx, q, func(r store.Scanner) (named, error) {
		var n named
		var at string
		if err := r.Scan(&n.name, &n.s.Enabled, &n.s.Reason, &n.s.By, &at); err != nil {
			return named{}, err
		}
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil && at != "" {
			n.s.At = &t
		}
		return n, nil
	}, `SELECT name, enabled, switch_reason, switched_by, switched_at FROM tools`)
	if err != nil {
		return nil, fmt.Errorf("tool switches: %w", err)
	}
	out := make(map[string]SwitchState, len(all))
	for _, n := range all {
		out[n.name] = n.s
	}
	return out, nil
}
