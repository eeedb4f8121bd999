package handlers

import (
	"context"
	"database/sql"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// TenantRetention sets how many days a tenant's traces are kept.
func TenantRetention(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		t, err := tenantInScope(ctx, st.Read(), user, c.Param("slug"))
		if err != nil {
			return err
		}
		typed := c.FormValue("retention_days")
		days, msg := formInt(typed, "Enter a whole number of days.")
		if msg == "" {
			msg = store.ValidateRetentionDays(days)
		}
		if msg != "" {
			return tenantFormPage(c, st.Read(), t, t.Name, typed, views.FieldErrors{"retention_days": msg})
		}
		return saveTenantSetting(c, st, t, "tenant.retention", "retention", map[string]any{"from_days": t.RetentionDays, "to_days": days},
			func(ctx context.Context, tx *sql.Tx) (bool, error) { return store.SetRetention(ctx, tx, t.ID, days) })
	}
}
