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
// latest decided ones. A pending change whose object moved since it was
// asked is marked out of date (it can only be rejected).
func (h *Console) ChangeList(c echo.Context) error {
	ctx := c.Request().Context()
	now := time.Now()
	pending, recent, err := changes.Queue(ctx, h.DB.Read(), *CurrentPrincipal(c), now)
	if err != nil {
		return err
	}
	v := views.ChangesView{Pending: pending, Recent: recent, Now: now, OutOfDate: map[string]bool{}}
	a := h.changeApplier()
	for _, ch := range pending {
		moved, err := a.Moved(ctx, h.DB.Read(), ch)
		if err != nil {
			return err
		}
		v.OutOfDate[ch.ID] = moved != nil
	}
	return Render(c, http.StatusOK, PageFor(c, "Changes"), views.Changes(PageFor(c, "Changes"), v))
}
