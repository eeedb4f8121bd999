package handlers

import (
	"database/sql"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
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
			return tenantFormPage(c, t, t.Name, typed, views.FieldErrors{"retention_days": msg})
		}
		changed := false
		err = st.Transact(ctx, func(tx *sql.Tx) error {
			changed, err = store.SetRetention(ctx, tx, t.ID, days)
			if err != nil || !changed {
				return err
			}
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor:   principalActor(user),
				Tenant:  t.Slug,
				Verb:    "tenant.retention",
				Subject: audit.Subject{Type: "tenant", ID: t.ID},
				Details: map[string]any{"from_days": t.RetentionDays, "to_days": days},
			})
			return err
		})
		if err != nil {
			return err
		}
		done := "retention"
		if !changed {
			done = "unchanged"
		}
		return seeOther(c, "/tenants/"+t.Slug+"?done="+done)
	}
}
