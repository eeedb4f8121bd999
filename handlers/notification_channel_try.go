package handlers

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/tools"
)

// NotificationChannelTest sends a test message to a channel now and shows
// whether it got through; the channel's error, when it did not, is shown
// with the channel (without secrets).
func (h *Console) NotificationChannelTest(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, notifyChange); err != nil {
		return err
	}
	if h.Notify == nil {
		return problem.Unavailable("unavailable", "Notifications are not available in this Warden.", 0)
	}
	res, err := h.Notify.SendTest(c.Request().Context(), principalActor(user), c.Param("name"))
	if err != nil {
		return err
	}
	var te *tools.Error
	switch {
	case res.Err == nil:
		return seeOther(c, "/notifications?done=test_ok")
	case errors.As(res.Err, &te) && te.Kind == tools.Unavailable:
		return seeOther(c, "/notifications?done=test_refused")
	}
	return seeOther(c, "/notifications?done=test_failed")
}
