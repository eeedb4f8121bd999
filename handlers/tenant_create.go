package handlers

import (
	"database/sql"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// TenantCreate adds a tenant. A new tenant is outside every scoped admin's
// scope, so only an admin of all tenants may add one.
func TenantCreate(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		if err := requireAllTenants(user, "Adding a tenant"); err != nil {
			return err
		}
		form := views.TenantForm{Slug: strings.TrimSpace(c.FormValue("slug")), Name: c.FormValue("name")}
		name := strings.TrimSpace(form.Name)
		errs := views.FieldErrors{}
		if msg := store.ValidateTenantSlug(form.Slug); msg != "" {
			errs["slug"] = msg
		}
		if msg := store.ValidateTenantName(name); msg != "" {
			errs["name"] = msg
		}
		if len(errs) == 0 {
			err := st.Transact(ctx, func(tx *sql.Tx) error {
				t, err := store.CreateTenantChecked(ctx, tx, form.Slug, name)
				if err != nil {
					return err
				}
				_, err = audit.Append(ctx, tx, audit.Event{
					Actor:   principalActor(user),
					Tenant:  t.Slug,
					Verb:    "tenant.create",
					Subject: audit.Subject{Type: "tenant", ID: t.ID},
					Details: map[string]any{"slug": t.Slug, "name": t.Name},
				})
				return err
			})
			switch {
			case errors.Is(err, store.ErrDuplicateSlug):
				errs["slug"] = "There is already a tenant " + form.Slug + ". Choose another slug."
			case err != nil:
				return err
			default:
				return seeOther(c, "/tenants/"+form.Slug+"?done=created")
			}
		}
		return renderTenantList(c, st, http.StatusUnprocessableEntity, views.TenantsView{Form: form, Errors: errs})
	}
}
