package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// NotificationChannelDeleteConfirm asks before deleting a channel, saying
// how many routes go with it.
func (h *Console) NotificationChannelDeleteConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), notifyChange); err != nil {
		return err
	}
	ctx := c.Request().Context()
	ch, err := notify.GetChannel(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	routes, err := notify.Routes(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	n := 0
	for _, r := range routes {
		if r.ChannelID == ch.ID {
			n++
		}
	}
	page := PageFor(c, "Delete channel")
	page.Active = "/notifications"
	return Render(c, http.StatusOK, page, views.NotificationChannelDeleteConfirm(page, views.ChannelDeleteView{Channel: ch, Routes: n}))
}

// NotificationChannelDelete deletes a channel with its routes.
func (h *Console) NotificationChannelDelete(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, notifyChange); err != nil {
		return err
	}
	if h.Notify == nil {
		return problem.Unavailable("unavailable", "Notifications are not available in this Warden.", 0)
	}
	if err := h.Notify.DeleteChannel(c.Request().Context(), principalActor(user), c.Param("name")); err != nil {
		return err
	}
	return seeOther(c, "/notifications?done=deleted")
}
