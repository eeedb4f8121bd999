package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/tenants"
)

// TenantRename changes a tenant's display name.
func (h *Console) TenantRename(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	typed := c.FormValue("name")
	changed, err := tenants.Rename(ctx, h.DB, principalActor(user), t.ID, typed)
	if errs, ok := fieldErrors(err); ok {
		return tenantFormPage(c, h.DB.Read(), t, typed, strconv.Itoa(t.RetentionDays), errs)
	}
	if err != nil {
		return err
	}
	return tenantSaved(c, t, changed, "renamed")
}
