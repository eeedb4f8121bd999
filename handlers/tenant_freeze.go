package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantFreezeConfirm asks before freezing (freeze true) or unfreezing a
// tenant, saying what will happen to its agents.
func TenantFreezeConfirm(st AdminStore, freeze bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, err := tenantInScope(c.Request().Context(), st.Read(), CurrentPrincipal(c), c.Param("slug"))
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
}

// TenantFreeze freezes (freeze true) or unfreezes a tenant. Pressing it
// again changes nothing and records nothing.
func TenantFreeze(st AdminStore, freeze bool) echo.HandlerFunc {
	done, noop := "frozen", "already_frozen"
	if !freeze {
		done, noop = "unfrozen", "already_unfrozen"
	}
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		t, err := tenantInScope(ctx, st.Read(), user, c.Param("slug"))
		if err != nil {
			return err
		}
		changed, err := tenants.SetFrozen(ctx, st, principalActor(user), t.ID, freeze)
		if err != nil {
			return err
		}
		result := done
		if !changed {
			result = noop
		}
		return seeOther(c, "/tenants/"+t.Slug+"?done="+result)
	}
}
