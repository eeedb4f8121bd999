package handlers

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// TenantRename changes a tenant's display name.
func TenantRename(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		t, err := tenantInScope(ctx, st.Read(), user, c.Param("slug"))
		if err != nil {
			return err
		}
		typed := c.FormValue("name")
		name := strings.TrimSpace(typed)
		if msg := store.ValidateTenantName(name); msg != "" {
			return tenantFormPage(c, st.Read(), t, typed, strconv.Itoa(t.RetentionDays), views.FieldErrors{"name": msg})
		}
		return saveTenantSetting(c, st, t, "tenant.rename", "renamed", map[string]any{"from": t.Name, "to": name},
			func(ctx context.Context, tx *sql.Tx) (bool, error) { return store.RenameTenant(ctx, tx, t.ID, name) })
	}
}
