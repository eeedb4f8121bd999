package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// shedAPI admits at most WARDEN_API_MAX_INFLIGHT agent API writes at once
// and answers the rest at once with 503 overloaded and Retry-After: 1,
// counted in /metrics (warden_api_shed_total). Under overload the
// requests admitted keep their latency instead of everyone's collapsing;
// the console does not pass here and stays usable.
func (s *Server) shedAPI() echo.MiddlewareFunc {
	slots := make(chan struct{}, s.cfg.APIMaxInFlight)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				return next(c)
			default:
				s.shed.Add(1)
				c.Response().Header().Set("Retry-After", "1")
				return c.JSON(http.StatusServiceUnavailable, map[string]any{"error": map[string]string{
					"code": "overloaded", "message": "Warden is at its limit of requests in flight; try again in a second.",
				}})
			}
		}
	}
}
