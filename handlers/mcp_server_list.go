package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/views"
)

const mcpChange = "Changing MCP servers"

var mcpNotices = map[string]string{
	"created":          "Server added. Discover its tools next; each is refused until you classify it.",
	"discovered":       "Tools discovered. New and changed tools are unclassified until you classify them.",
	"discovery_failed": "The discovery failed; nothing changed. The reason is shown with the server.",
	"classified":       "Tool classified. It counts from the next call.",
	"saved":            "Server saved. It counts from the next call.",
	"unchanged":        "Nothing changed; nothing was recorded.",
}

// MCPServerList shows the upstream MCP servers, their tools and classes,
// and the form that adds a server.
func (h *Console) MCPServerList(c echo.Context) error {
	return h.renderMCPServers(c, http.StatusOK, views.MCPServersView{Notice: doneNotice(c, mcpNotices),
		Failed: c.QueryParam("done") == "discovery_failed", Form: views.MCPServerForm{Timeout: "10000"}})
}

func (h *Console) renderMCPServers(c echo.Context, status int, v views.MCPServersView) error {
	ctx := c.Request().Context()
	q := h.DB.Read()
	servers, err := mcpservers.List(ctx, q)
	if err != nil {
		return err
	}
	calls, capped, err := mcpservers.CallsSince(ctx, q, time.Now().Add(-time.Hour))
	if err != nil {
		return err
	}
	for _, s := range servers {
		row := views.MCPServerRow{Server: s, LastHour: calls[s.Name], Capped: capped, Breaker: h.MCP.Breaker(s.Name)}
		if row.Tools, err = mcpservers.Tools(ctx, q, s.Name); err != nil {
			return err
		}
		if row.HeaderNames, err = mcpservers.HeaderNames(ctx, q, h.Sealer, s.Name); err != nil {
			row.HeaderError = "the server's seal does not open with this Warden's key"
		}
		if !s.Enabled {
			if row.OffReason, err = mcpservers.OffReason(ctx, q, s.Name, ""); err != nil {
				return err
			}
		}
		v.Servers = append(v.Servers, row)
	}
	v.CanEdit = CurrentPrincipal(c).AllTenantScope()
	page := PageFor(c, "MCP servers")
	page.Active = "/mcp-servers"
	return Render(c, status, page, views.MCPServerList(page, v))
}
