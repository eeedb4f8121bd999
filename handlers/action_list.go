package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/search"
	"github.com/wardenhq/warden/views"
)

// actionPageSize is how many actions one page of the Actions list shows.
const actionPageSize = 50

// ActionList is the Actions list: the actions of the tenants in scope in
// every status, newest first, filtered by status, tool, tenant, target,
// amount and dates, a page at a time. A filter typed wrong is shown next
// to its field with a 422, and nothing is listed.
func (h *Console) ActionList(c echo.Context) error {
	ctx := c.Request().Context()
	in := c.QueryParams()
	get := func(k string) string { return strings.TrimSpace(in.Get(k)) }
	ff := views.ActionFilter{Tenant: get("tenant"), Status: get("status"), Tool: get("tool"), Target: get("target"),
		Min: get("min"), Max: get("max"), From: get("from"), To: get("to")}
	page, err := listPage(c, actionPageSize)
	if err != nil {
		return err
	}
	scope, ids, err := tenantScope(ctx, h.DB, CurrentPrincipal(c), ff.Tenant)
	if err != nil {
		return err
	}
	v := views.ActionsView{Tenants: scope, Filter: ff, Now: time.Now(), Filtered: len(ff.Query()) > 0 || !page.First()}
	if v.Tools, err = toolNames(ctx, h); err != nil {
		return err
	}
	f, errs := actionFilter(ff, h.Redactor)
	status := http.StatusOK
	if len(errs) > 0 {
		v.Errors, status = errs, http.StatusUnprocessableEntity
	} else {
		f.TenantIDs, f.Page = ids, page
		rows, err := approvals.Browse(ctx, h.DB.Read(), f)
		if err != nil {
			return err
		}
		v.Rows = rows.Rows
		v.NextPage, v.PrevPage = pageLinks("/actions", ff.Query(), rows)
	}
	p := PageFor(c, "Actions")
	return Render(c, status, p, views.ActionList(p, v))
}

// actionFilter turns the typed filter into Browse's, with a message for
// each field typed wrong. Amounts read as the approval queue's do; a
// target is matched whole, in any case, as dual control matches it.
func actionFilter(ff views.ActionFilter, r *redact.Redactor) (approvals.BrowseFilter, views.FieldErrors) {
	f := approvals.BrowseFilter{Status: ff.Status, Tool: ff.Tool}
	errs := views.FieldErrors{}
	if ff.Status != "" && !slices.Contains(views.ActionStatuses, ff.Status) {
		errs["status"] = "Choose a status from the list."
	}
	if len(ff.Tool) > 200 || !utf8.ValidString(ff.Tool) {
		errs["tool"] = "Choose a tool from the list."
	}
	switch {
	case ff.Target == "":
	case utf8.RuneCountInString(ff.Target) > search.MaxLen || !utf8.ValidString(ff.Target):
		errs["target"] = "Too long: type a whole target such as ORD-1004, at most 200 characters."
	case r == nil:
		errs["target"] = "This Warden keeps no targets it can match: it runs without the agent runtime."
	default:
		f.TargetKey = approvals.TargetOf(r, ff.Target).Key
	}
	f.MinMinor, f.MaxMinor = amountRange(ff.Min, ff.Max, errs)
	var err error
	if f.Since, err = filterDay(ff.From, "from"); err != nil {
		errs["from"] = dayMessage(err)
	}
	if f.Until, err = filterDay(ff.To, "to"); err != nil {
		errs["to"] = dayMessage(err)
	}
	if !f.Until.IsZero() {
		f.Until = f.Until.AddDate(0, 0, 1) // "to" is inclusive: up to the end of that day
		if !f.Since.IsZero() && !f.Until.After(f.Since) {
			errs["to"] = "The end date is before the start date."
		}
	}
	if len(errs) == 0 {
		errs = nil
	}
	return f, errs
}

// toolNames are the catalog's tools, for a filter.
func toolNames(ctx context.Context, h *Console) ([]string, error) {
	tools, err := catalog.List(ctx, h.DB.Read())
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, nil
}
