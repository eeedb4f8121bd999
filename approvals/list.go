package approvals

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/store"
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
	Page      store.Page // the first page of 25 when zero
}

// Row is an action in the queue with its tenant's slug.
type Row struct {
	Action
	TenantSlug string
}

// orders are the queue's sort orders, each ending in the id so that ties
// page stably.
var orders = map[string]store.Order{
	SortExpiry: {Key: "a.expires_at", ID: "a.id"},
	SortAge:    {Key: "a.created_at", ID: "a.id"},
	SortAmount: {Key: "COALESCE(a.amount_minor, -1)", KeyDesc: true, ID: "a.id", Numeric: true},
}

// cursorOf is where a row stands in the order of sort.
func cursorOf(sort string) func(Row) store.Cursor {
	return func(r Row) store.Cursor {
		switch sort {
		case SortAge:
			return store.Cursor{Key: store.FormatTime(r.CreatedAt), ID: r.ID}
		case SortAmount:
			amount := int64(-1)
			if r.AmountMinor != nil {
				amount = *r.AmountMinor
			}
			return store.Cursor{Key: strconv.FormatInt(amount, 10), ID: r.ID}
		}
		return store.Cursor{Key: store.FormatTime(r.ExpiresAt), ID: r.ID}
	}
}

// List returns one page of actions and how many match in all.
func List(ctx context.Context, q store.Querier, f Filter, now time.Time) (store.Paged[Row], int, error) {
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
			return store.Paged[Row]{}, 0, nil
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
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions a WHERE `+strings.Join(where, " AND "), args...).Scan(&total); err != nil {
		return store.Paged[Row]{}, 0, fmt.Errorf("count actions: %w", err)
	}
	if _, ok := orders[f.Sort]; !ok {
		f.Sort = SortExpiry
	}
	order := orders[f.Sort]
	if f.Page.Size <= 0 {
		f.Page.Size = 25
	}
	if cond, cargs := f.Page.Where(order); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	cols := prefixColumns(actionColumns)
	out, err := store.Query(ctx, q, scanRow, `SELECT `+cols+`, t.slug FROM actions a JOIN tenants t ON t.id = a.tenant_id WHERE `+
		strings.Join(where, " AND ")+` ORDER BY `+f.Page.OrderBy(order)+` LIMIT ?`, append(args, f.Page.Fetch())...)
	if err != nil {
		return store.Paged[Row]{}, 0, fmt.Errorf("list actions: %w", err)
	}
	return store.Paginate(f.Page, out, cursorOf(f.Sort)), total, nil
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

// scanRow reads an action and, after its columns, its tenant's slug.
func scanRow(s store.Scanner) (Row, error) {
	var r Row
	a, err := scan(scanWithSlug{s, &r.TenantSlug})
	if err != nil {
		return Row{}, err
	}
	r.Action = a
	return r, nil
}
