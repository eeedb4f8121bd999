package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// TenantLister lists tenants within a scope (nil for all).
type TenantLister interface {
	ListTenants(ctx context.Context, slugs []string) ([]store.Tenant, error)
}

// TenantList shows the tenants in the admin's scope.
func TenantList(st TenantLister) echo.HandlerFunc {
	return func(c echo.Context) error {
		ts, err := st.ListTenants(c.Request().Context(), tenantFilter(CurrentPrincipal(c)))
		if err != nil {
			return err
		}
		page := PageFor(c, "Tenants")
		return Render(c, http.StatusOK, page, views.TenantList(page, views.TenantsView{Tenants: ts}))
	}
}
