package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/views"
)

// KeyShow is a key's page: its facts, whether its agent's callbacks can be
// signed, and, once, the callback secret a rotation has just made; the
// forms that change its scopes, rate limit and model limits, and the
// changes of them waiting for a second admin. It never shows the key's
// own secret: Warden does not have it.
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
	return h.renderKeyShow(c, http.StatusOK, k, func(v *views.KeyShowView) { v.CallbackSecret = secret })
}
