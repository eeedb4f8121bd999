package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/views"
)

// KeyShow is a key's page: its facts, whether its agent's callbacks can be
// signed, and, once, the callback secret a rotation has just made. It
// never shows the key's own secret: Warden does not have it.
func (h *Console) KeyShow(c echo.Context) error {
	ctx := c.Request().Context()
	k, err := keyInScope(ctx, h.DB.Read(), CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	secret, err := h.Flash.Take(c, rotatedCallbackSecretFlash+k.ID)
	if err != nil {
		return err
	}
	by, err := principals.NameOf(ctx, h.DB, k.CreatedBy)
	if err != nil {
		return err
	}
	limits, err := keyModelLimitsForm(ctx, h.DB.Read(), k.ID)
	if err != nil {
		return err
	}
	limits.Notice = doneNotice(c, keyModelNotices)
	pending, err := changes.PendingOn(ctx, h.DB.Read(), k.ID, time.Now(), changes.KeyRateLimit)
	if err != nil {
		return err
	}
	now := time.Now()
	noStore(c)
	page := PageFor(c, k.Name)
	page.Active = "/keys"
	return Render(c, http.StatusOK, page, views.KeyShow(page, views.KeyShowView{
		Key: k, State: keyState(k, now), CreatedBy: by,
		CallbackSecret: secret, PreviousCallbackValid: k.PreviousCallbackValid(now), ModelLimits: limits, Pending: pending,
	}))
}
