package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/search"
	"github.com/wardenhq/warden/views"
)

// Search is the header's search: what one typed line names among the
// actions, journeys and audit events the viewer may open — the list
// pages' tenant scope, and journeys and events only for the roles whose
// pages show them. A search typed wrong (too long, an amount Warden
// cannot read) is said on the page with a 422, and nothing is searched.
func (h *Console) Search(c echo.Context) error {
	ctx := c.Request().Context()
	page := PageFor(c, "Search")
	raw := c.QueryParam("q")
	v := views.SearchView{Query: shorten(strings.TrimSpace(raw), search.MaxLen), Now: time.Now(),
		Journeys: page.MayOpen("/traces/any"), Audit: page.MayOpen("/audit")}
	if !c.QueryParams().Has("q") {
		return Render(c, http.StatusOK, page, views.SearchPage(page, v))
	}
	q, err := search.Parse(raw)
	var refusal *search.Refusal
	switch {
	case errors.As(err, &refusal):
		v.Refusal = refusal.Message
		return Render(c, http.StatusUnprocessableEntity, page, views.SearchPage(page, v))
	case err != nil:
		return err
	}
	scope, ids, err := tenantScope(ctx, h.DB, CurrentPrincipal(c), "")
	if err != nil {
		return err
	}
	s := search.Scope{TenantIDs: ids, Journeys: v.Journeys, Audit: v.Audit}
	if ids != nil {
		s.TenantSlugs = []string{}
		for _, t := range scope {
			s.TenantSlugs = append(s.TenantSlugs, t.Slug)
		}
	}
	if v.Results, err = search.Run(ctx, h.DB.Read(), h.Redactor, s, q); err != nil {
		return err
	}
	if v.Names, err = eventNames(ctx, h.DB, v.Results.Events); err != nil {
		return err
	}
	v.Searched = true
	if len(v.Results.People) == 0 && len(v.Results.Keys) == 0 {
		v.ActionsURL = searchActionsURL(q)
	}
	page.Title = "Search: " + v.Query
	return Render(c, http.StatusOK, page, views.SearchPage(page, v))
}

// searchActionsURL is the Actions list that shows every action of a
// search by target or by an amount of a two-decimal currency (what its
// filter reads), or "".
func searchActionsURL(q search.Query) string {
	if len(q.Amounts) == 0 {
		if q.Words == "" {
			return ""
		}
		return views.SearchActionsURL(q.Words, "")
	}
	for _, a := range q.Amounts {
		if a.NotCurrencies != nil || (len(a.Currencies) == 1 && twoDecimals(a.Currencies[0])) {
			return views.SearchActionsURL("", strconv.FormatInt(a.Minor/100, 10)+"."+pad2(a.Minor%100))
		}
	}
	return ""
}

func twoDecimals(code string) bool {
	c, err := money.ParseCurrency(code)
	return err == nil && c.Exponent == 2
}

func pad2(n int64) string {
	s := strconv.FormatInt(n, 10)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// shorten cuts s to at most n characters, for showing back what was
// typed.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
