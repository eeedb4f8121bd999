package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// ToolDisableConfirm asks before switching a tool off, saying what will
// happen to journeys that call it, and asks for the reason.
func (h *Console) ToolDisableConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), catalogChange); err != nil {
		return err
	}
	t, err := catalog.Get(c.Request().Context(), h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	return renderToolDisable(c, http.StatusOK, views.ToolSwitchView{Tool: t})
}

func renderToolDisable(c echo.Context, status int, v views.ToolSwitchView) error {
	page := PageFor(c, "Switch off "+v.Tool.Name)
	page.Active = "/tools"
	return Render(c, status, page, views.ToolDisableConfirm(page, v))
}

// ToolEnable turns a tool on; ToolDisable turns it off, with the reason
// typed: the kill switch. Pressing it twice changes and records nothing
// the second time.
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
	t, err := catalog.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	if ch, err := h.govern(c, user, switchProposal(changes.ToolSwitch, t.Name, t.Enabled, enable)); err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	reason := ""
	if !enable {
		reason = strings.TrimSpace(c.FormValue("reason"))
	}
	changed, err := catalog.Switch(ctx, h.DB, principalActor(user), t.Name, enable, reason)
	if p := problem.From(err); err != nil && p.Kind == problem.KindUnprocessable {
		return renderToolDisable(c, http.StatusUnprocessableEntity, views.ToolSwitchView{Tool: t, Reason: reason, Errors: views.FieldErrors{"reason": p.Message}})
	}
	if err != nil {
		return err
	}
	result := done
	if !changed {
		result = noop
	}
	return seeOther(c, "/tools?done="+result)
}
