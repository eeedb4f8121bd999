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
	rows, err := q.QueryContext(ctx, `SELECT name, enabled, switch_reason, switched_by, switched_at FROM tools`)
	if err != nil {
		return nil, fmt.Errorf("tool switches: %w", err)
	}
	defer rows.Close()
	out := map[string]SwitchState{}
	for rows.Next() {
		var name, at string
		var s SwitchState
		if err := rows.Scan(&name, &s.Enabled, &s.Reason, &s.By, &at); err != nil {
			return nil, fmt.Errorf("tool switches: %w", err)
		}
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil && at != "" {
			s.At = &t
		}
		out[name] = s
	}
	return out, rows.Err()
}
