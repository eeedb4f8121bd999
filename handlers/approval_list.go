package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/money"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// approvalPageSize is how many pending actions one page of the queue
// lists.
const approvalPageSize = 25

// ApprovalList is the approval queue: the pending actions of the tenants
// in the approver's scope, filtered, sorted and a page at a time. The page
// refreshes its rows from ApprovalQueueRows when JavaScript runs; without
// it, the Refresh link reloads the same query.
func (h *Console) ApprovalList(c echo.Context) error {
	v, err := loadQueue(c, h.DB)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusBadRequest
	}
	page := PageFor(c, "Approvals")
	return Render(c, status, page, views.ApprovalQueue(page, v))
}

// loadQueue reads the queue's query and lists the page it asks for. A
// filter that is not an amount or not in scope is reported, not guessed.
func loadQueue(c echo.Context, st *store.DB) (views.ApprovalQueueView, error) {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	q := c.QueryParams()
	ff := views.ApprovalFilter{
		Tenant: q.Get("tenant"),
		Tool:   strings.TrimSpace(q.Get("tool")),
		Min:    strings.TrimSpace(q.Get("min")),
		Max:    strings.TrimSpace(q.Get("max")),
		Sort:   q.Get("sort"),
	}
	page, err := listPage(c, approvalPageSize)
	if err != nil {
		return views.ApprovalQueueView{}, err
	}
	scope, ids, err := tenantScope(ctx, st, user, ff.Tenant)
	if err != nil {
		return views.ApprovalQueueView{}, err
	}
	f, errs, err := queueFilter(ids, ff)
	if err != nil {
		return views.ApprovalQueueView{}, err
	}
	if ff.Sort == "" {
		ff.Sort = approvals.SortExpiry
	}
	tools, err := catalog.List(ctx, st.Read())
	if err != nil {
		return views.ApprovalQueueView{}, err
	}
	now := time.Now().UTC()
	v := views.ApprovalQueueView{
		Tenants: scope, Filter: ff, Errors: errs, Now: now,
		Filtered: ff.Tenant != "" || ff.Tool != "" || ff.Min != "" || ff.Max != "",
		Self:     approvalsURL("/approvals", ff, q),
		RowsURL:  approvalsURL("/approvals/rows", ff, q),
	}
	for _, t := range tools {
		v.Tools = append(v.Tools, t.Name)
	}
	if len(errs) > 0 {
		return v, nil
	}
	f.Page = page
	rows, total, err := approvals.List(ctx, st.Read(), f, now)
	if err != nil {
		return views.ApprovalQueueView{}, err
	}
	v.Rows, v.Total = rows.Rows, total
	shown := make([]string, len(rows.Rows))
	for i, r := range rows.Rows {
		shown[i] = r.ID
	}
	if v.Approved, err = approvals.ApprovedBy(ctx, st.Read(), user.ID, shown); err != nil {
		return views.ApprovalQueueView{}, err
	}
	if v.Claims, err = approvals.ClaimsOf(ctx, st.Read(), shown, now); err != nil {
		return views.ApprovalQueueView{}, err
	}
	v.ViewerID, v.CSRF = user.ID, PageFor(c, "").CSRF
	v.CanTake = make(map[string]bool, len(rows.Rows))
	for _, r := range rows.Rows {
		v.CanTake[r.ID] = approvals.MayTake(*user, r.Action, r.TenantSlug, v.Approved[r.ID], now)
	}
	v.NextPage, v.PrevPage = pageLinks("/approvals", filterQuery(ff), rows)
	return v, nil
}

// queueFilter turns the typed filter into the query's. Amounts are typed
// in currency units and compared in minor units (cents), exactly; field
// errors come back for the form, other refusals as errors. tenantIDs
// limits the queue to tenants in scope (nil: every tenant).
func queueFilter(tenantIDs []string, ff views.ApprovalFilter) (approvals.Filter, views.FieldErrors, error) {
	f := approvals.Filter{Status: approvals.StatusPending, Tool: ff.Tool, TenantIDs: tenantIDs}
	switch ff.Sort {
	case "", approvals.SortExpiry, approvals.SortAge, approvals.SortAmount:
		f.Sort = ff.Sort
	default:
		return f, nil, problem.Invalid("bad_request", "Sort the queue by expiry, age or amount.")
	}
	errs := views.FieldErrors{}
	f.MinMinor, f.MaxMinor = amountRange(ff.Min, ff.Max, errs)
	if len(errs) == 0 {
		errs = nil
	}
	return f, errs, nil
}

// amountRange parses the amount filter's lowest and highest bounds (the
// queue's and the Actions list's), putting what is wrong with them in
// errs under "min" and "max".
func amountRange(lowest, highest string, errs views.FieldErrors) (min, max *int64) {
	var msg string
	if min, msg = amountBound(lowest); msg != "" {
		errs["min"] = "Lowest amount: " + msg
	}
	if max, msg = amountBound(highest); msg != "" {
		errs["max"] = "Highest amount: " + msg
	}
	if min != nil && max != nil && *max < *min {
		errs["max"] = "The highest amount is below the lowest."
	}
	return min, max
}

// amountBound parses one bound of the amount filter, typed in currency
// units; empty is no bound. It reuses the admin money parser and then asks
// for whole cents, so nothing is rounded.
func amountBound(raw string) (*int64, string) {
	if raw == "" {
		return nil, ""
	}
	// A filter, not a saved value: "$54" finds what it says.
	micros, msg := money.ParseMicros(strings.TrimPrefix(strings.TrimSpace(raw), "$"))
	if msg != "" {
		return nil, msg
	}
	if micros%microsPerCent != 0 {
		return nil, "Use at most two decimal places, such as 45.50."
	}
	minor := micros / microsPerCent
	return &minor, ""
}

// microsPerCent converts the money parser's micro-units to minor units of
// a two-decimal currency.
const microsPerCent = 10_000

// approvalsURL builds the queue's address for a filter, on the page the
// query q is on (its after or before cursor); path is the page or its rows
// partial.
func approvalsURL(path string, ff views.ApprovalFilter, q url.Values) string {
	v := filterQuery(ff)
	for _, k := range []string{"after", "before"} {
		if c := q.Get(k); c != "" {
			v.Set(k, c)
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// filterQuery is the queue's filter as query parameters.
func filterQuery(ff views.ApprovalFilter) url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"tenant": ff.Tenant, "tool": ff.Tool, "min": ff.Min, "max": ff.Max} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if ff.Sort != "" && ff.Sort != approvals.SortExpiry {
		q.Set("sort", ff.Sort)
	}
	return q
}
