package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/store"
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

	out, err := store.Query(ctx, q, scanEvent, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return out, nil
}

// Query selects events of the trail, for the audit page and for exports.
// Empty fields select everything. Scoping a principal to its tenants is
// the caller's job (it sets Tenant).
type Query struct {
	Tenant string
	// Tenants, when not nil, keeps only the events of these tenants: a
	// principal scoped to some tenants sees theirs and no others (nor
	// events of no tenant). An empty, non-nil list selects nothing.
	Tenants     []string
	ActorID     string    // a principal's id, a key's id, "executor", ...
	Verb        string    // exact ("action.approve"), or a prefix ending in "." ("action.")
	SubjectType string    // "action", "tenant", "key", ...
	SubjectID   string    // with SubjectType, or alone
	Since       time.Time // events at or after
	Until       time.Time // events before
}

// Where is the query's SQL condition over audit_events and its arguments;
// "" selects every event.
func (q Query) Where() (string, []any) {
	var where []string
	var args []any
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if q.Tenant != "" {
		add("tenant = ?", q.Tenant)
	}
	if q.Tenants != nil {
		if len(q.Tenants) == 0 {
			where = append(where, "1 = 0")
		} else {
			where = append(where, "tenant IN (?"+strings.Repeat(", ?", len(q.Tenants)-1)+")")
			for _, t := range q.Tenants {
				args = append(args, t)
			}
		}
	}
	if q.ActorID != "" {
		add("actor_id = ?", q.ActorID)
	}
	switch {
	case strings.HasSuffix(q.Verb, "."):
		add("substr(verb, 1, ?) = ?", len(q.Verb))
		args = append(args, q.Verb)
	case q.Verb != "":
		add("verb = ?", q.Verb)
	}
	if q.SubjectType != "" {
		add("subject_type = ?", q.SubjectType)
	}
	if q.SubjectID != "" {
		add("subject_id = ?", q.SubjectID)
	}
	if !q.Since.IsZero() {
		add("time >= ?", q.Since.UTC().Format(TimeFormat))
	}
	if !q.Until.IsZero() {
		add("time < ?", q.Until.UTC().Format(TimeFormat))
	}
	return strings.Join(where, " AND "), args
}

// pageOrder is the trail's order as people read it: newest first.
var pageOrder = store.Order{Key: "seq", KeyDesc: true, ID: "seq", IDDesc: true, Numeric: true}

// Page returns one page of the events q selects, newest first.
func Page(ctx context.Context, db Querier, q Query, page store.Page) (store.Paged[Event], error) {
	cond, args := q.Where()
	var where []string
	if cond != "" {
		where = append(where, cond)
	}
	if c, cargs := page.Where(pageOrder); c != "" {
		where, args = append(where, c), append(args, cargs...)
	}
	query := selectEvents
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	out, err := store.Query(ctx, db, scanEvent, query+" ORDER BY "+page.OrderBy(pageOrder)+" LIMIT ?", append(args, page.Fetch())...)
	if err != nil {
		return store.Paged[Event]{}, fmt.Errorf("page of audit events: %w", err)
	}
	return store.Paginate(page, out, func(e Event) store.Cursor {
		s := strconv.FormatInt(e.Seq, 10)
		return store.Cursor{Key: s, ID: s}
	}), nil
}

// StoredHead is the newest event as stored, {0, GenesisHash} for an empty
// chain. It reads the head without verifying anything: it is what the
// chain claims, for display and for a checkpoint to compare; Verify says
// whether it holds.
func StoredHead(ctx context.Context, q Querier) (Head, error) {
	h := Head{Seq: 0, Hash: GenesisHash}
	err := q.QueryRowContext(ctx, `SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1`).Scan(&h.Seq, &h.Hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Head{}, fmt.Errorf("read audit chain head: %w", err)
	}
	return h, nil
}
