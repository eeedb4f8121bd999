package handlers

import (
	"context"
	"database/sql"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// TenantDualControl sets the amount from which a tenant's actions need two
// distinct approvers. The form takes currency units ("1000.00"); 0 turns
// dual control off.
func TenantDualControl(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		t, err := tenantInScope(ctx, st.Read(), user, c.Param("slug"))
		if err != nil {
			return err
		}
		typed := c.FormValue("dual_control")
		micros, msg := parseMicros(typed)
		if msg == "" && micros%10_000 != 0 {
			msg = "Use whole cents, such as 1000.00."
		}
		if msg != "" {
			v := tenantView(t)
			v.DualControl, v.Errors = typed, views.FieldErrors{"dual_control": msg}
			return renderTenantShow(c, 422, v)
		}
		minor := micros / 10_000
		return saveTenantSetting(c, st, t, "tenant.dual_control", "dual_control", map[string]any{"from_minor": t.DualControlMinor, "to_minor": minor},
			func(ctx context.Context, tx *sql.Tx) (bool, error) { return store.SetDualControl(ctx, tx, t.ID, minor) })
	}
}
