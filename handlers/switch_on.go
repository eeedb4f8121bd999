package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/views"
)

// SwitchOn switches a tool or skill on again: one press, no confirmation
// (it restores what was running before). Pressing it again changes and
// records nothing.
func (h *Console) SwitchOn(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, switchChange); err != nil {
		return err
	}
	v, err := h.switchTarget(ctx, c.Param("kind"), c.Param("name"))
	if err != nil {
		return err
	}
	changed, err := h.pressSwitch(ctx, user, v.Kind, v.Name, true, "")
	if err != nil {
		return err
	}
	return seeOther(c, "/switches?done="+switchResult(v.Kind, true, changed))
}

// pressSwitch calls the runtime's switch for kind: one transaction with
// its audit event.
func (h *Console) pressSwitch(ctx context.Context, user *identity.Principal, kind, name string, on bool, reason string) (bool, error) {
	if kind == views.SwitchSkill {
		return h.Runtime.SwitchSkill(ctx, principalActor(user), name, on, reason)
	}
	return h.Runtime.SwitchTool(ctx, principalActor(user), name, on, reason)
}
