package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/problem"
)

// MCPAPI is the agents' MCP door, /mcp (Streamable HTTP): the tools of
// upstream MCP servers, under the same virtual keys as /v1.
type MCPAPI struct {
	Gateway *admission.Gateway
	Door    http.Handler // mcpservers.Gateway.Handler
}

// Serve authenticates the key (401 without a valid one, before any MCP is
// spoken; the key's rate limits count each request) and hands the request
// to the MCP handler with the caller in its context.
func (api *MCPAPI) Serve(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		if problem.From(err).Status() == http.StatusUnauthorized {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="warden"`)
		}
		return err
	}
	api.Door.ServeHTTP(c.Response(), c.Request().WithContext(mcpservers.WithCaller(ctx, caller)))
	return nil
}
