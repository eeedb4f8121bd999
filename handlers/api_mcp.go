package handlers

import (
	"net/http"
	"time"

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
	// Draining reports that the server is shutting down: a call waiting
	// for approval lets go (the client sends it again to another replica
	// or after the restart).
	Draining func() bool
}

// ReleaseSlotKey names, in the echo context, the function that gives the
// request's slot of the agent API's in-flight limit back (web's shedAPI):
// a call waiting for approval holds none, so waiting calls never starve
// the API.
const ReleaseSlotKey = "warden.release_slot"

// writeStall is how long a waiting call's response may go without a
// write: each check of the action extends the server's write deadline
// by this much, so a call may wait for its approvers for hours.
const writeStall = time.Minute

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
	rc := http.NewResponseController(c.Response().Writer)
	ctx = mcpservers.WithHold(ctx, func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeStall))
		return api.Draining == nil || !api.Draining()
	})
	if release, ok := c.Get(ReleaseSlotKey).(func()); ok {
		ctx = mcpservers.WithRelease(ctx, release)
	}
	api.Door.ServeHTTP(c.Response(), c.Request().WithContext(mcpservers.WithCaller(ctx, caller)))
	return nil
}
