package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantRetention sets how many days a tenant's traces are kept.
func (h *Console) TenantRetention(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	typed := c.FormValue("retention_days")
	days, msg := formInt(typed, "Enter a whole number of days.")
	if msg != "" {
		return tenantFormPage(c, h.DB.Read(), t, t.Name, typed, views.FieldErrors{"retention_days": msg})
	}
	changed, err := tenants.SetRetention(ctx, h.DB, principalActor(user), t.ID, days)
	if errs, ok := fieldErrors(err); ok {
		return tenantFormPage(c, h.DB.Read(), t, t.Name, typed, errs)
	}
	if err != nil {
		return err
	}
	return tenantSaved(c, t, changed, "retention")
}
