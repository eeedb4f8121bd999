package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantList shows the tenants in the admin's scope and, to an admin of
// all tenants, the form that adds one.
func (h *Console) TenantList(c echo.Context) error {
	return renderTenantList(c, h.DB, http.StatusOK, views.TenantsView{})
}

// renderTenantList renders the list around v's form state.
func renderTenantList(c echo.Context, st *store.DB, status int, v views.TenantsView) error {
	user := CurrentPrincipal(c)
	ts, err := tenants.List(c.Request().Context(), st, tenantFilter(user))
	if err != nil {
		return err
	}
	v.Tenants = ts
	if v.Owners, err = owners.Of(c.Request().Context(), st.Read(), owners.Tenant); err != nil {
		return err
	}
	v.CanCreate = user.AllTenantScope()
	page := PageFor(c, "Tenants")
	return Render(c, status, page, views.TenantList(page, v))
}
