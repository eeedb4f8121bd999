package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/views"
)

// Status shows on-call what this process sees: database, identity
// provider, uptime.
func Status(source func(ctx context.Context, p *identity.Principal) (views.StatusView, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := source(c.Request().Context(), CurrentPrincipal(c))
		if err != nil {
			return err
		}
		page := PageFor(c, "Status")
		return Render(c, http.StatusOK, page, views.Status(page, v))
	}
}
