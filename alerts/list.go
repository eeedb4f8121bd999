package alerts

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// Firing returns the alerts firing now, oldest first (then by kind and
// subject, as they fired together).
func Firing(ctx context.Context, q store.Querier) ([]Alert, error) {
	return list(ctx, q, `WHERE a.resolved_at IS NULL ORDER BY a.fired_at, a.kind, a.subject`, -1)
}

// FiringForPeople returns the alerts firing now, those nobody has
// acknowledged first (then oldest first): the order on-call works them.
func FiringForPeople(ctx context.Context, q store.Querier) ([]Alert, error) {
	return list(ctx, q, `WHERE a.resolved_at IS NULL ORDER BY CASE WHEN a.acked_at IS NULL THEN 0 ELSE 1 END, a.fired_at, a.kind, a.subject`, -1)
}

// Get loads one alert, or store.ErrNotFound.
func Get(ctx context.Context, q store.Querier, id string) (Alert, error) {
	out, err := list(ctx, q, `WHERE a.id = ?`, -1, id)
	if err != nil {
		return Alert{}, err
	}
	if len(out) == 0 {
		return Alert{}, store.ErrNotFound
	}
	return out[0], nil
}

// Resolved returns the n most recently resolved alerts, newest first.
func Resolved(ctx context.Context, q store.Querier, n int) ([]Alert, error) {
	return list(ctx, q, `WHERE a.resolved_at IS NOT NULL ORDER BY a.resolved_at DESC, a.kind, a.subject LIMIT ?`, n)
}

func list(ctx context.Context, q store.Querier, where string, n int, args ...any) ([]Alert, error) {
	if n >= 0 {
		args = append(args, n)
	}
	out, err := store.Query(ctx, q, scanAlert, `
		SELECT a.id, a.kind, a.subject, COALESCE(t.slug, ''), a.value, a.threshold, a.fired_at, a.resolved_at,
			a.acked_by, a.acked_by_name, a.acked_at, a.ack_note
		FROM alerts a LEFT JOIN tenants t ON a.kind = 'budget_burn' AND t.id = a.subject `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list alerts: %w", err)
	}
	return out, nil
}

func scanAlert(s store.Scanner) (Alert, error) {
	var a Alert
	var fired string
	var resolved, ackedAt sql.NullString
	var ack Ack
	if err := s.Scan(&a.ID, &a.Kind, &a.Subject, &a.Tenant, &a.Value, &a.Threshold, &fired, &resolved,
		&ack.By, &ack.ByName, &ackedAt, &ack.Note); err != nil {
		return Alert{}, err
	}
	if ackedAt.Valid {
		ack.At, _ = time.Parse(time.RFC3339Nano, ackedAt.String)
		a.Ack = &ack
	}
	a.FiredAt, _ = time.Parse(time.RFC3339Nano, fired)
	if resolved.Valid {
		t, _ := time.Parse(time.RFC3339Nano, resolved.String)
		a.Resolved = &t
	}
	return a, nil
}

func sortedKeys(m map[key]condition) []key {
	return slices.SortedFunc(maps.Keys(m), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.subject, b.subject))
	})
}
