package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantCreate adds a tenant. A new tenant is outside every scoped admin's
// scope, so only an admin of all tenants may add one.
func (h *Console) TenantCreate(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, "Adding a tenant"); err != nil {
		return err
	}
	form := views.TenantForm{Slug: strings.TrimSpace(c.FormValue("slug")), Name: c.FormValue("name")}
	t, err := tenants.Create(ctx, h.DB, principalActor(user), form.Slug, form.Name)
	errs, invalid := fieldErrors(err)
	switch {
	case invalid:
	case errors.Is(err, tenants.ErrDuplicateSlug):
		errs = views.FieldErrors{"slug": "There is already a tenant " + form.Slug + ". Choose another slug."}
	case err != nil:
		return err
	default:
		return seeOther(c, "/tenants/"+t.Slug+"?done=created")
	}
	return renderTenantList(c, h.DB, http.StatusUnprocessableEntity, views.TenantsView{Form: form, Errors: errs})
}
