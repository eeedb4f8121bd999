package handlers

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Every list page pages the same way (store's keyset paging): "Next" and
// "Previous" links carry the cursor of the row the page ended or began
// at, as ?after= or ?before=, next to the list's filters.

// listPage reads the page a list page asks for, with the list's page size.
// A cursor Warden did not write (edited, truncated, or both after and
// before) is a 400 that says to start from the first page.
func listPage(c echo.Context, size int) (store.Page, error) {
	p, err := store.ParsePage(c.QueryParam("after"), c.QueryParam("before"), size)
	if err != nil {
		return store.Page{}, problem.Invalid("bad_page", "The page link is not one Warden wrote; start again from the first page.")
	}
	return p, nil
}

// pageLinks are the addresses of a page's next and previous pages: path
// with the list's filters q and the cursor ("" when there is none).
func pageLinks[T any](path string, q url.Values, p store.Paged[T]) (next, prev string) {
	link := func(param string, c *store.Cursor) string {
		if c == nil {
			return ""
		}
		v := url.Values{}
		for k, vs := range q {
			if k != "after" && k != "before" && len(vs) > 0 && vs[0] != "" {
				v.Set(k, vs[0])
			}
		}
		v.Set(param, c.String())
		return path + "?" + v.Encode()
	}
	return link("after", p.Next), link("before", p.Prev)
}
