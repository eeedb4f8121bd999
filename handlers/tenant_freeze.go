package handlers

import (
	"database/sql"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
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
	verb, done, noop := "tenant.freeze", "frozen", "already_frozen"
	if !freeze {
		verb, done, noop = "tenant.unfreeze", "unfrozen", "already_unfrozen"
	}
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		t, err := tenantInScope(ctx, st.Read(), user, c.Param("slug"))
		if err != nil {
			return err
		}
		changed := false
		err = st.Transact(ctx, func(tx *sql.Tx) error {
			changed, err = store.SetFrozen(ctx, tx, t.ID, freeze)
			if err != nil || !changed {
				return err
			}
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor:   principalActor(user),
				Tenant:  t.Slug,
				Verb:    verb,
				Subject: audit.Subject{Type: "tenant", ID: t.ID},
				Details: map[string]any{"frozen": freeze},
			})
			return err
		})
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
