package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/views"
)

// Status shows on-call what this process sees: database, identity
// provider, uptime.
func (h *Console) Status(c echo.Context) error {
	v, err := h.StatusView(c.Request().Context(), CurrentPrincipal(c))
	if err != nil {
		return err
	}
	page := PageFor(c, "Status")
	return Render(c, http.StatusOK, page, views.Status(page, v))
}
