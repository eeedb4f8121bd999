package approvals

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/store"
)

// Sort orders of the queue.
const (
	SortExpiry = "expiry" // soonest to expire first (default)
	SortAge    = "age"    // oldest first
	SortAmount = "amount" // largest first
)

// Filter selects actions for the approval queue.
type Filter struct {
	TenantIDs []string // nil: every tenant
	Status    string   // default pending
	Tool      string
	MinMinor  *int64
	MaxMinor  *int64
	Sort      string
	Limit     int
	Offset    int
}

// Row is an action in the queue with its tenant's slug.
type Row struct {
	Action
	TenantSlug string
}

// List returns one page of actions and how many match in all.
func List(ctx context.Context, q store.Querier, f Filter, now time.Time) ([]Row, int, error) {
	var where []string
	var args []any
	status := f.Status
	if status == "" {
		status = StatusPending
	}
	where, args = append(where, "a.status = ?"), append(args, status)
	if status == StatusPending {
		where, args = append(where, "a.expires_at > ?"), append(args, store.FormatTime(now))
	}
	if f.TenantIDs != nil {
		if len(f.TenantIDs) == 0 {
			return nil, 0, nil
		}
		where = append(where, "a.tenant_id IN (?"+strings.Repeat(",?", len(f.TenantIDs)-1)+")")
		for _, t := range f.TenantIDs {
			args = append(args, t)
		}
	}
	if f.Tool != "" {
		where, args = append(where, "a.tool = ?"), append(args, f.Tool)
	}
	if f.MinMinor != nil {
		where, args = append(where, "a.amount_minor >= ?"), append(args, *f.MinMinor)
	}
	if f.MaxMinor != nil {
		where, args = append(where, "a.amount_minor <= ?"), append(args, *f.MaxMinor)
	}
	cond := " WHERE " + strings.Join(where, " AND ")
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions a`+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count actions: %w", err)
	}
	order := " ORDER BY a.expires_at, a.id"
	switch f.Sort {
	case SortAge:
		order = " ORDER BY a.created_at, a.id"
	case SortAmount:
		order = " ORDER BY COALESCE(a.amount_minor, -1) DESC, a.id"
	}
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 25
	}
	cols := prefixColumns(actionColumns)
	rows, err := q.QueryContext(ctx, `SELECT `+cols+`, t.slug FROM actions a JOIN tenants t ON t.id = a.tenant_id`+cond+order+` LIMIT ? OFFSET ?`,
		append(args, f.Limit, max(0, f.Offset))...)
	if err != nil {
		return nil, 0, fmt.Errorf("list actions: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		a, err := scan(scanWithSlug{rows, &r.TenantSlug})
		if err != nil {
			return nil, 0, fmt.Errorf("list actions: %w", err)
		}
		r.Action = a
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// prefixColumns qualifies each column with the actions alias.
func prefixColumns(cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = "a." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// scanWithSlug appends the tenant slug column to scan's destinations.
type scanWithSlug struct {
	s    interface{ Scan(...any) error }
	slug *string
}

func (w scanWithSlug) Scan(dest ...any) error { return w.s.Scan(append(dest, w.slug)...) }
