package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/views"
)

// rotatedCallbackSecretFlash carries a rotated callback secret to the key's
// page, once.
const rotatedCallbackSecretFlash = "rotated_callback_secret:"

// KeyCallbackRotateConfirm asks before rotating a key's callback secret
// (or generating the first one), saying what changes for its agent.
func (h *Console) KeyCallbackRotateConfirm(c echo.Context) error {
	k, err := keyInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	page := PageFor(c, "Rotate the callback secret of "+k.Name)
	page.Active = "/keys"
	return Render(c, http.StatusOK, page, views.KeyCallbackRotateConfirm(page, views.KeyCallbackRotateView{
		Key: k, PreviousCallbackValid: k.PreviousCallbackValid(time.Now()),
	}))
}

// KeyCallbackRotate gives a key a new callback secret and shows it once on
// the key's page: like a new key's secrets, it rides once in the encrypted
// session through the redirect, so a reload cannot show it again.
func (h *Console) KeyCallbackRotate(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	k, err := keyInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	_, secret, err := keys.RotateCallbackSecret(ctx, h.DB, h.Sealer, k.ID, principalActor(user), time.Now())
	if err != nil {
		return err
	}
	if err := h.Flash.Put(c, rotatedCallbackSecretFlash+k.ID, secret); err != nil {
		return err
	}
	return seeOther(c, "/keys/"+k.ID)
}
