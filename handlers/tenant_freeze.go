package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantFreezeConfirm asks before freezing (freeze true) or unfreezing a
// tenant, saying what will happen to its agents.
func (h *Console) tenantFreezeConfirm(c echo.Context, freeze bool) error {
	t, err := tenantInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("slug"))
	if err != nil {
		return err
	}
	title := "Freeze "
	if !freeze {
		title = "Unfreeze "
	}
	page := PageFor(c, title+t.Slug)
	page.Active = "/tenants"
	return Render(c, http.StatusOK, page, views.TenantFreezeConfirm(page, views.TenantFreezeView{Tenant: t, Freeze: freeze}))
}

// TenantFreeze freezes a tenant; TenantUnfreeze unfreezes it. Pressing it
// again changes nothing and records nothing.
func (h *Console) TenantFreeze(c echo.Context) error   { return h.tenantFreeze(c, true) }
func (h *Console) TenantUnfreeze(c echo.Context) error { return h.tenantFreeze(c, false) }

// TenantFreezeConfirm and TenantUnfreezeConfirm ask before the change.
func (h *Console) TenantFreezeConfirm(c echo.Context) error   { return h.tenantFreezeConfirm(c, true) }
func (h *Console) TenantUnfreezeConfirm(c echo.Context) error { return h.tenantFreezeConfirm(c, false) }

func (h *Console) tenantFreeze(c echo.Context, freeze bool) error {
	done, noop := "frozen", "already_frozen"
	if !freeze {
		done, noop = "unfrozen", "already_unfrozen"
	}
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	changed, err := tenants.SetFrozen(ctx, h.DB, principalActor(user), t.ID, freeze)
	if err != nil {
		return err
	}
	result := done
	if !changed {
		result = noop
	}
	return seeOther(c, "/tenants/"+t.Slug+"?done="+result)
}
