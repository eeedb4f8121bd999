package handlers

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/views"
)

// HomeStore is what the home page reads.
type HomeStore interface {
	CountTenants(ctx context.Context, slugs []string) (int64, error)
	CountAuditEvents(ctx context.Context) (int64, error)
}

// Home shows the signed-in user who they are and live counts.
func Home(st HomeStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		user := CurrentPrincipal(c)
		ctx := c.Request().Context()
		tenants, err := st.CountTenants(ctx, tenantFilter(user))
		if err != nil {
			return fmt.Errorf("home: count tenants: %w", err)
		}
		events, err := st.CountAuditEvents(ctx)
		if err != nil {
			return fmt.Errorf("home: count audit events: %w", err)
		}
		page := PageFor(c, "Home")
		return Render(c, http.StatusOK, page, views.Home(page, views.HomeView{Tenants: tenants, AuditEvents: events}))
	}
}

// tenantFilter turns a principal's scope into a store filter: nil for all.
func tenantFilter(p *identity.Principal) []string {
	if p.AllTenantScope() {
		return nil
	}
	return append([]string{}, p.Tenants...)
}
