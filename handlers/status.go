package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/views"
)

// Status shows on-call what this process sees (database, identity
// provider, uptime) and what needs review in their tenants, the failed
// actions a page at a time.
func (h *Console) Status(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	pg, err := listPage(c, failedPageSize)
	if err != nil {
		return err
	}
	v, err := h.StatusView(ctx, user)
	if err != nil {
		return err
	}
	r, err := reviewFor(ctx, h.DB, user, pg)
	if err != nil {
		return err
	}
	v.FailedActions, v.FailedTotal, v.ReviewEffects = reviewItems(r.Failed.Rows), r.FailedTotal, r.Effects
	v.NextPage, v.PrevPage = pageLinks("/status", nil, r.Failed)
	v.Notice = doneNotice(c, statusNotices)
	page := PageFor(c, "Status")
	return Render(c, http.StatusOK, page, views.Status(page, v))
}
