package handlers

import (
	"net/http"

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
	"enabled":          "Server switched on.",
	"disabled":         "Server switched off: every call to its tools is refused.",
}

// MCPServerList shows the upstream MCP servers, their tools and classes,
// and the form that adds a server.
func (h *Console) MCPServerList(c echo.Context) error {
	return h.renderMCPServers(c, http.StatusOK, views.MCPServersView{Notice: doneNotice(c, mcpNotices),
		Failed: c.QueryParam("done") == "discovery_failed", Form: views.MCPServerForm{Timeout: "10000"}})
}

func (h *Console) renderMCPServers(c echo.Context, status int, v views.MCPServersView) error {
	ctx := c.Request().Context()
	servers, err := mcpservers.List(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	for _, s := range servers {
		tools, err := mcpservers.Tools(ctx, h.DB.Read(), s.Name)
		if err != nil {
			return err
		}
		v.Servers = append(v.Servers, views.MCPServerRow{Server: s, Tools: tools})
	}
	v.CanEdit = CurrentPrincipal(c).AllTenantScope()
	page := PageFor(c, "MCP servers")
	page.Active = "/mcp-servers"
	return Render(c, status, page, views.MCPServerList(page, v))
}
