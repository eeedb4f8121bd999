package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/views"
)

// DependencyList shows each tool dependency's breaker state, recent error
// rate, latency and bulkhead use (journeys.Service.Dependencies).
func (h *Console) DependencyList(c echo.Context) error {
	pg := PageFor(c, "Dependencies")
	return Render(c, http.StatusOK, pg, views.Dependencies(pg, h.Runtime.Dependencies()))
}
