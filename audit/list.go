package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/store"
)

// Page sizes for List.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Filter selects events for List.
type Filter struct {
	// Tenant keeps only the events of this tenant; empty means every
	// tenant. Scoping a principal to its tenants is the caller's job.
	Tenant string
	// Before keeps only events with seq < Before when it is positive.
	// Passing the last seq of one page gives the next page, stable while
	// new events arrive.
	Before int64
	// Limit is the page size: DefaultLimit when 0, at most MaxLimit.
	Limit int
	// Offset skips that many matching events.
	Offset int
}

// Count is the number of events in the chain.
func Count(ctx context.Context, q Querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count audit events: %w", err)
	}
	return n, nil
}

// List returns the events matching f, newest first. It reads what is stored
// and does not verify it; that is Verify's job.
func List(ctx context.Context, q Querier, f Filter) ([]Event, error) {
	if f.Limit < 0 || f.Limit > MaxLimit || f.Offset < 0 || f.Before < 0 {
		return nil, fmt.Errorf("list audit events: invalid page (limit %d, offset %d, before %d): limit must be 0..%d, offset and before not negative",
			f.Limit, f.Offset, f.Before, MaxLimit)
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	var where []string
	var args []any
	if f.Tenant != "" {
		where = append(where, "tenant = ?")
		args = append(args, f.Tenant)
	}
	if f.Before > 0 {
		where = append(where, "seq < ?")
		args = append(args, f.Before)
	}
	query := selectEvents
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC LIMIT ? OFFSET ?"
	args = append(args, limit, f.Offset)

	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("list audit events: %w", err)
		}
		ev, err := r.event()
		if err != nil {
			return nil, fmt.Errorf("list audit events: %w", err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return out, nil
}

// pageOrder is the trail's order as people read it: newest first.
var pageOrder = store.Order{Key: "seq", KeyDesc: true, ID: "seq", IDDesc: true, Numeric: true}

// Page returns one page of the trail, newest first: the events of tenant
// (every tenant when empty).
func Page(ctx context.Context, q Querier, tenant string, page store.Page) (store.Paged[Event], error) {
	var where []string
	var args []any
	if tenant != "" {
		where, args = append(where, "tenant = ?"), append(args, tenant)
	}
	if cond, cargs := page.Where(pageOrder); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	query := selectEvents
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := q.QueryContext(ctx, query+" ORDER BY "+page.OrderBy(pageOrder)+" LIMIT ?", append(args, page.Fetch())...)
	if err != nil {
		return store.Paged[Event]{}, fmt.Errorf("page of audit events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return store.Paged[Event]{}, fmt.Errorf("page of audit events: %w", err)
		}
		ev, err := r.event()
		if err != nil {
			return store.Paged[Event]{}, fmt.Errorf("page of audit events: %w", err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return store.Paged[Event]{}, fmt.Errorf("page of audit events: %w", err)
	}
	return store.Paginate(page, out, func(e Event) store.Cursor {
		s := strconv.FormatInt(e.Seq, 10)
		return store.Cursor{Key: s, ID: s}
	}), nil
}
