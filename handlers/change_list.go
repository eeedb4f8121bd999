package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/views"
)

// ChangeList is the Changes queue (docs/changes.md): loosening changes of
// the admin's tenants waiting for a second admin, oldest first, and the
// latest decided ones.
func (h *Console) ChangeList(c echo.Context) error {
	now := time.Now()
	pending, recent, err := changes.Queue(c.Request().Context(), h.DB.Read(), *CurrentPrincipal(c), now)
	if err != nil {
		return err
	}
	return Render(c, http.StatusOK, PageFor(c, "Changes"), views.Changes(PageFor(c, "Changes"), views.ChangesView{Pending: pending, Recent: recent, Now: now}))
}
