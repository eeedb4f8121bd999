package handlers

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// MCPServerCreate adds an upstream MCP server (its tools are discovered
// separately).
func (h *Console) MCPServerCreate(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, mcpChange); err != nil {
		return err
	}
	f := views.MCPServerForm{Name: strings.TrimSpace(c.FormValue("name")), URL: strings.TrimSpace(c.FormValue("url")),
		Timeout: c.FormValue("timeout"), Owner: strings.TrimSpace(c.FormValue("owner"))}
	s := mcpservers.Server{Name: f.Name, URL: f.URL, Owner: f.Owner, Enabled: true}
	errs := views.FieldErrors{}
	if ms, msg := formInt(f.Timeout, "Enter the timeout as a whole number of milliseconds."); msg != "" {
		errs["timeout"] = msg
	} else {
		s.Timeout = time.Duration(ms) * time.Millisecond
	}
	for k, v := range s.Validate() {
		if _, ok := errs[k]; !ok {
			errs[k] = v
		}
	}
	if len(errs) == 0 {
		_, err := mcpservers.Create(c.Request().Context(), h.DB, h.Sealer, principalActor(user), s, c.FormValue("token"))
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case errors.Is(err, mcpservers.ErrExists):
			errs["name"] = "There is already an MCP server " + s.Name + "."
		case err != nil:
			return err
		default:
			return seeOther(c, "/mcp-servers?done=created")
		}
	}
	return h.renderMCPServers(c, http.StatusUnprocessableEntity, views.MCPServersView{Form: f, Errors: errs})
}

// MCPServerDiscover lists a server's tools again. A failure is kept with
// the server and shown on the page.
func (h *Console) MCPServerDiscover(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, mcpChange); err != nil {
		return err
	}
	if h.MCP == nil {
		return problem.Unavailable("unavailable", "MCP discovery is not available in this Warden.", 0)
	}
	_, err := h.MCP.Discover(c.Request().Context(), principalActor(user), c.Param("name"))
	switch {
	case errors.Is(err, mcpservers.ErrNotFound):
		return err
	case err != nil && problem.From(err).Status() == http.StatusServiceUnavailable:
		return seeOther(c, "/mcp-servers?done=discovery_failed")
	case err != nil:
		return err
	}
	return seeOther(c, "/mcp-servers?done=discovered")
}

// MCPServerEnable switches a server on.
func (h *Console) MCPServerEnable(c echo.Context) error { return h.mcpSwitch(c, true) }

// MCPServerDisable switches a server off: every call to its tools is
// refused.
func (h *Console) MCPServerDisable(c echo.Context) error { return h.mcpSwitch(c, false) }

func (h *Console) mcpSwitch(c echo.Context, on bool) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, mcpChange); err != nil {
		return err
	}
	if err := mcpservers.SetEnabled(c.Request().Context(), h.DB, principalActor(user), c.Param("name"), on); err != nil {
		return err
	}
	if on {
		return seeOther(c, "/mcp-servers?done=enabled")
	}
	return seeOther(c, "/mcp-servers?done=disabled")
}

// MCPToolClassify gives a tool an impact class and reversibility, for the
// digest the admin read (a tool that changed since is refused, 409).
func (h *Console) MCPToolClassify(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, mcpChange); err != nil {
		return err
	}
	class := mcpservers.Class{Impact: c.FormValue("impact"), Reversible: c.FormValue("reversible") == "on", Digest: c.FormValue("digest")}
	err := mcpservers.Classify(c.Request().Context(), h.DB, principalActor(user), c.Param("name"), c.FormValue("tool"), class)
	if invalid, ok := fieldErrors(err); ok {
		return problem.Invalid("invalid_input", invalid["impact"])
	}
	if err != nil {
		return err
	}
	return seeOther(c, "/mcp-servers?done=classified")
}
