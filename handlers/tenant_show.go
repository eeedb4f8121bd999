package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

var tenantNotices = map[string]string{
	"created":          "Tenant created. Give it a budget and keys next.",
	"renamed":          "Tenant renamed.",
	"retention":        "Trace retention saved.",
	"frozen":           "Tenant frozen: its agents now get 403 tenant_frozen.",
	"unfrozen":         "Tenant unfrozen: its agents can call the API again.",
	"already_frozen":   "The tenant was already frozen; nothing changed.",
	"already_unfrozen": "The tenant was not frozen; nothing changed.",
	"unchanged":        "That is the current value; nothing changed.",
}

// TenantShow shows one tenant's settings: name, trace retention, freeze.
func TenantShow(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		t, err := tenantInScope(c.Request().Context(), st.Read(), CurrentPrincipal(c), c.Param("slug"))
		if err != nil {
			return err
		}
		return renderTenantShow(c, http.StatusOK, views.TenantView{
			Tenant: t, Name: t.Name, Retention: strconv.Itoa(t.RetentionDays), Notice: doneNotice(c, tenantNotices),
		})
	}
}

func renderTenantShow(c echo.Context, status int, v views.TenantView) error {
	page := PageFor(c, v.Tenant.Name+" · Tenants")
	page.Active = "/tenants"
	return Render(c, status, page, views.TenantShow(page, v))
}

// tenantFormPage re-renders the settings page with one form's errors; the
// other form shows the stored value.
func tenantFormPage(c echo.Context, t store.Tenant, name, retention string, errs views.FieldErrors) error {
	return renderTenantShow(c, http.StatusUnprocessableEntity, views.TenantView{Tenant: t, Name: name, Retention: retention, Errors: errs})
}
