package web

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/wardenhq/warden/models"
)

// corsHeaders are the answer headers a browser agent may read across
// origins: OpenAI's rate-limit headers and Warden's own.
var corsHeaders = []string{
	"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests",
	"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens",
	models.HeaderRequestID, models.HeaderCost, "X-Warden-Cache", "Retry-After",
}

// cors lets browser agents on the configured origins (WARDEN_CORS_ORIGINS)
// call the agents' API, /v1/* and /mcp only: preflights are answered, keys go in
// Authorization (never cookies, so no credentials are allowed). The
// console is skipped: a page, a form or a sign-in never answers another
// origin. Without origins there is no middleware at all: an OPTIONS
// request gets the router's 204 with Allow, and no CORS header, as before.
func (s *Server) cors() echo.MiddlewareFunc {
	origins := s.cfg.CORSOrigins
	if len(origins) == 0 {
		return nil
	}
	return middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper: func(c echo.Context) bool { return !agentPath(c.Request().URL.Path) },
		// Exact origins only: echo's list would read "*" in an origin as
		// a wildcard and match sub-domains.
		AllowOriginFunc: func(origin string) (bool, error) { return slices.Contains(origins, origin), nil },
		AllowMethods:    []string{http.MethodGet, http.MethodPost, http.MethodDelete},
		AllowHeaders: []string{echo.HeaderAuthorization, echo.HeaderContentType, models.HeaderMetadata, "Idempotency-Key",
			"Mcp-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID"}, // the MCP door
		ExposeHeaders: corsHeaders,
		MaxAge:        600,
	})
}
