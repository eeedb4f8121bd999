package handlers

import (
	"database/sql"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
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
			return tenantFormPage(c, t, typed, strconv.Itoa(t.RetentionDays), views.FieldErrors{"name": msg})
		}
		changed := false
		err = st.Transact(ctx, func(tx *sql.Tx) error {
			changed, err = store.RenameTenant(ctx, tx, t.ID, name)
			if err != nil || !changed {
				return err
			}
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor:   principalActor(user),
				Tenant:  t.Slug,
				Verb:    "tenant.rename",
				Subject: audit.Subject{Type: "tenant", ID: t.ID},
				Details: map[string]any{"from": t.Name, "to": name},
			})
			return err
		})
		if err != nil {
			return err
		}
		done := "renamed"
		if !changed {
			done = "unchanged"
		}
		return seeOther(c, "/tenants/"+t.Slug+"?done="+done)
	}
}
