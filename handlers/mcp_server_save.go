package handlers

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/money"
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

// MCPToolClassify gives a tool an impact class and reversibility, the
// arguments its money is in and its cost a call, for the digest the admin
// read (a tool that changed since is refused, 409). A class that does not
// fit the tool's schema shows the page again with the form as typed.
func (h *Console) MCPToolClassify(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, mcpChange); err != nil {
		return err
	}
	f := views.MCPClassifyForm{Server: c.Param("name"), Tool: c.FormValue("tool"), Impact: c.FormValue("impact"), Reversible: c.FormValue("reversible") == "on",
		AmountArg: strings.TrimSpace(c.FormValue("amount_arg")), CurrencyArg: strings.TrimSpace(c.FormValue("currency_arg")),
		TargetArg: strings.TrimSpace(c.FormValue("target_arg")), UnitCost: c.FormValue("unit_cost"), Errors: views.FieldErrors{}}
	class := mcpservers.Class{Impact: f.Impact, Reversible: f.Reversible, Digest: c.FormValue("digest"),
		AmountArg: f.AmountArg, CurrencyArg: f.CurrencyArg, TargetArg: f.TargetArg}
	if strings.TrimSpace(f.UnitCost) != "" { // empty: calls cost nothing
		if micros, msg := money.ParseMicros(f.UnitCost); msg != "" {
			f.Errors["unit_cost"] = msg
		} else {
			class.UnitCostMicros = micros
		}
	}
	if _, err := mcpservers.GetTool(c.Request().Context(), h.DB.Read(), f.Server, f.Tool); err != nil {
		return err
	}
	if len(f.Errors) == 0 {
		err := mcpservers.Classify(c.Request().Context(), h.DB, principalActor(user), f.Server, f.Tool, class)
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			f.Errors = invalid
		case err != nil:
			return err
		default:
			return seeOther(c, "/mcp-servers?done=classified")
		}
	}
	return h.renderMCPServers(c, http.StatusUnprocessableEntity, views.MCPServersView{Classify: &f, Form: views.MCPServerForm{Timeout: "10000"}})
}
