package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/catalog"
	"github.com/wardenhq/warden/views"
)

// ToolDisableConfirm asks before switching a tool off, saying what will
// happen to journeys that call it.
func ToolDisableConfirm(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := requireAllTenants(CurrentPrincipal(c), catalogChange); err != nil {
			return err
		}
		t, err := loadTool(c.Request().Context(), st.Read(), c.Param("name"))
		if err != nil {
			return err
		}
		page := PageFor(c, "Switch off "+t.Name)
		page.Active = "/tools"
		return Render(c, http.StatusOK, page, views.ToolDisableConfirm(page, views.ToolSwitchView{Tool: t}))
	}
}

// ToolSwitch turns a tool on (enable true) or off: the kill switch.
// Pressing it twice changes and records nothing the second time.
func ToolSwitch(st AdminStore, enable bool) echo.HandlerFunc {
	done, noop := "disabled", "already_off"
	if enable {
		done, noop = "enabled", "already_on"
	}
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		if err := requireAllTenants(user, catalogChange); err != nil {
			return err
		}
		t, err := loadTool(ctx, st.Read(), c.Param("name"))
		if err != nil {
			return err
		}
		changed, err := catalog.Switch(ctx, st, principalActor(user), t.Name, enable)
		if err != nil {
			return err
		}
		result := done
		if !changed {
			result = noop
		}
		return seeOther(c, "/tools?done="+result)
	}
}
