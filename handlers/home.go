package handlers

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/views"
)

// Home shows the signed-in user who they are and live counts, and
// on-call the alerts firing.
func (h *Console) Home(c echo.Context) error {
	user := CurrentPrincipal(c)
	ctx := c.Request().Context()
	tenants, err := h.DB.CountTenants(ctx, tenantFilter(user))
	if err != nil {
		return fmt.Errorf("home: count tenants: %w", err)
	}
	events, err := audit.Count(ctx, h.DB.Read())
	if err != nil {
		return fmt.Errorf("home: count audit events: %w", err)
	}
	v := views.HomeView{Tenants: tenants, AuditEvents: events}
	// On-call is paged by alerts: their home page starts with what fires.
	if user.HasRole(identity.RoleOncall) {
		if v.Alerts, err = firingAlerts(ctx, h.DB.Read(), user); err != nil {
			return fmt.Errorf("home: firing alerts: %w", err)
		}
	}
	page := PageFor(c, "Home")
	return Render(c, http.StatusOK, page, views.Home(page, v))
}

// tenantFilter turns a principal's scope into a store filter: nil for all.
func tenantFilter(p *identity.Principal) []string {
	if p.AllTenantScope() {
		return nil
	}
	return append([]string{}, p.Tenants...)
}
