package approvals

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// BrowseFilter selects actions in any status for the Actions list and for
// search, newest first. Every field narrows; the zero filter is every
// action. Each selection has an index in this order (migration 0034), so
// a page costs the same however many actions there are.
type BrowseFilter struct {
	TenantIDs []string // nil: every tenant; empty: none
	ID        string
	Status    string
	Tool      string
	// TargetKey is a target's keyed token (TargetOf(...).Key): the
	// actions on that order, account or customer.
	TargetKey string
	// MinMinor and MaxMinor bound the amount in minor units, as the
	// approval queue's filter does (whatever the currency).
	MinMinor, MaxMinor *int64
	// Currencies keeps only actions in these currencies, and
	// NotCurrencies leaves those out (search's "2400": 240000 cents of a
	// two-decimal currency, or 2400 yen).
	Currencies, NotCurrencies []string
	KeyID                     string // the agent's key that asked
	RequestedBy               string // the console user who asked (a reversal's requester)
	JourneyID                 string
	Since                     time.Time // created at or after
	Until                     time.Time // created before
	Page                      store.Page
}

// browseOrder is the Actions list's order: newest first.
var browseOrder = store.Order{Key: "a.created_at", KeyDesc: true, ID: "a.id", IDDesc: true}

// Browse returns one page of the actions f selects, newest first, each
// with its tenant's slug.
func Browse(ctx context.Context, q store.Querier, f BrowseFilter) (store.Paged[Row], error) {
	var where []string
	var args []any
	add := func(cond string, vs ...any) { where, args = append(where, cond), append(args, vs...) }
	in := func(col string, vals []string, not bool) {
		op := " IN ("
		if not {
			op = " NOT IN ("
		}
		cond := col + op + "?" + strings.Repeat(",?", len(vals)-1) + ")"
		vs := make([]any, len(vals))
		for i, v := range vals {
			vs[i] = v
		}
		add(cond, vs...)
	}
	if f.TenantIDs != nil {
		if len(f.TenantIDs) == 0 {
			return store.Paged[Row]{}, nil
		}
		in("a.tenant_id", f.TenantIDs, false)
	}
	for _, eq := range []struct{ col, val string }{
		{"a.id", f.ID}, {"a.status", f.Status}, {"a.tool", f.Tool}, {"a.target_key", f.TargetKey},
		{"a.key_id", f.KeyID}, {"a.requested_by", f.RequestedBy}, {"a.journey_id", f.JourneyID},
	} {
		if eq.val != "" {
			add(eq.col+" = ?", eq.val)
		}
	}
	if f.MinMinor != nil && f.MaxMinor != nil && *f.MinMinor == *f.MaxMinor {
		add("a.amount_minor = ?", *f.MinMinor) // one amount: the index is read in order
	} else {
		if f.MinMinor != nil {
			add("a.amount_minor >= ?", *f.MinMinor)
		}
		if f.MaxMinor != nil {
			add("a.amount_minor <= ?", *f.MaxMinor)
		}
	}
	if len(f.Currencies) > 0 {
		in("a.currency", f.Currencies, false)
	}
	if len(f.NotCurrencies) > 0 {
		in("a.currency", f.NotCurrencies, true)
	}
	if !f.Since.IsZero() {
		add("a.created_at >= ?", store.FormatTime(f.Since))
	}
	if !f.Until.IsZero() {
		add("a.created_at < ?", store.FormatTime(f.Until))
	}
	if f.Page.Size <= 0 {
		f.Page.Size = 50
	}
	if cond, cargs := f.Page.Seek(browseOrder); cond != "" {
		add(cond, cargs...)
	}
	query := `SELECT ` + prefixColumns(actionColumns) + `, t.slug FROM actions a JOIN tenants t ON t.id = a.tenant_id`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY " + f.Page.OrderBy(browseOrder) + " LIMIT ?"
	out, err := store.Query(ctx, q, scanRow, query, append(args, f.Page.Fetch())...)
	if err != nil {
		return store.Paged[Row]{}, fmt.Errorf("browse actions: %w", err)
	}
	return store.Paginate(f.Page, out, func(r Row) store.Cursor {
		return store.Cursor{Key: store.FormatTime(r.CreatedAt), ID: r.ID}
	}), nil
}

// DecidedBy returns the newest actions the principal approved or
// rejected, up to n, each with its tenant's slug; tenantIDs limits them
// as BrowseFilter's does.
func DecidedBy(ctx context.Context, q store.Querier, principalID string, tenantIDs []string, n int) ([]Row, error) {
	if tenantIDs != nil && len(tenantIDs) == 0 {
		return nil, nil
	}
	// The decisions are read newest first from their index, and a page of
	// them joined: not every decision the person ever made.
	where, args := "d.principal_id = ?", []any{principalID}
	if tenantIDs != nil {
		where += " AND a.tenant_id IN (?" + strings.Repeat(",?", len(tenantIDs)-1) + ")"
		for _, t := range tenantIDs {
			args = append(args, t)
		}
	}
	out, err := store.Query(ctx, q, scanRow, `SELECT `+prefixColumns(actionColumns)+`, t.slug FROM decisions d
		JOIN actions a ON a.id = d.action_id JOIN tenants t ON t.id = a.tenant_id
		WHERE `+where+` ORDER BY d.created_at DESC, d.id DESC LIMIT ?`, append(args, n)...)
	if err != nil {
		return nil, fmt.Errorf("actions decided by %s: %w", principalID, err)
	}
	return out, nil
}
