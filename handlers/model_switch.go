package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/models"
)

// ModelEnable switches a deployment on.
func (h *Console) ModelEnable(c echo.Context) error { return h.modelSwitch(c, true) }

// ModelDisable switches a deployment off: its alias's calls skip it.
func (h *Console) ModelDisable(c echo.Context) error { return h.modelSwitch(c, false) }

func (h *Console) modelSwitch(c echo.Context, on bool) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	if err := models.SetEnabled(c.Request().Context(), h.DB, principalActor(user), c.Param("name"), on); err != nil {
		return err
	}
	if on {
		return seeOther(c, "/models?done=enabled")
	}
	return seeOther(c, "/models?done=disabled")
}
