package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/catalog"
	"github.com/wardenhq/warden/views"
)

// ToolDisableConfirm asks before switching a tool off, saying what will
// happen to journeys that call it.
func (h *Console) ToolDisableConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), catalogChange); err != nil {
		return err
	}
	t, err := loadTool(c.Request().Context(), h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	page := PageFor(c, "Switch off "+t.Name)
	page.Active = "/tools"
	return Render(c, http.StatusOK, page, views.ToolDisableConfirm(page, views.ToolSwitchView{Tool: t}))
}

// ToolEnable turns a tool on; ToolDisable turns it off: the kill switch.
// Pressing it twice changes and records nothing the second time.
func (h *Console) ToolEnable(c echo.Context) error  { return h.toolSwitch(c, true) }
func (h *Console) ToolDisable(c echo.Context) error { return h.toolSwitch(c, false) }

func (h *Console) toolSwitch(c echo.Context, enable bool) error {
	done, noop := "disabled", "already_off"
	if enable {
		done, noop = "enabled", "already_on"
	}
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, catalogChange); err != nil {
		return err
	}
	t, err := loadTool(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	changed, err := catalog.Switch(ctx, h.DB, principalActor(user), t.Name, enable, "")
	if err != nil {
		return err
	}
	result := done
	if !changed {
		result = noop
	}
	return seeOther(c, "/tools?done="+result)
}
