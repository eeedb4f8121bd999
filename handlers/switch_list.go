package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// switchChange is what the kill switches change: every tenant's calls.
const switchChange = "A kill switch"

var switchNotices = map[string]string{
	"tool_off":       "Tool switched off: its calls now fail with 403 tool_disabled.",
	"tool_on":        "Tool switched on: its calls run again.",
	"skill_off":      "Skill switched off: new journeys for it are refused with 422 skill_disabled.",
	"skill_on":       "Skill switched on: journeys are routed to it again.",
	"mcp_server_off": "MCP server switched off: every call to its tools through /mcp is refused.",
	"mcp_server_on":  "MCP server switched on: calls to its tools are forwarded again.",
	"mcp_tool_off":   "MCP tool switched off: its calls through /mcp are refused.",
	"mcp_tool_on":    "MCP tool switched on: its calls are forwarded again.",
	"already_off":    "It was already off; nothing changed and nothing was recorded.",
	"already_on":     "It was already on; nothing changed and nothing was recorded.",
	"tenant_tool_on": "Tool switched on again for that tenant: its calls go through.",
}

// SwitchList shows every tool, skill, MCP server and MCP tool with its
// kill switch.
func (h *Console) SwitchList(c echo.Context) error {
	ctx := c.Request().Context()
	ts, err := catalog.List(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	stored, err := catalog.SkillSwitches(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	v := views.SwitchesView{Tools: ts, Notice: doneNotice(c, switchNotices)}
	if v.ToolSwitches, err = catalog.SwitchStates(ctx, h.DB.Read()); err != nil {
		return err
	}
	for _, s := range h.Runtime.Skills() {
		row := views.SkillSwitchRow{Name: s.Name, Description: s.Description, Tools: s.Tools, Enabled: true}
		if sw, ok := stored[s.Name]; ok {
			row.Enabled, row.Reason = sw.Enabled, sw.Reason
		}
		v.Skills = append(v.Skills, row)
	}
	if v.MCPServers, v.MCPTools, err = mcpSwitchRows(ctx, h.DB.Read()); err != nil {
		return err
	}
	perTenant, err := catalog.TenantSwitches(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	user := CurrentPrincipal(c)
	for _, s := range perTenant {
		if user.InTenant(s.TenantSlug) {
			v.TenantOff = append(v.TenantOff, s)
		}
	}
	if v.Pending, err = h.pendingOfKinds(ctx, user, changes.ToolSwitch, changes.ToolTenantSwitch, changes.SkillSwitch,
		changes.MCPServerSwitch, changes.MCPToolSwitch); err != nil {
		return err
	}
	page := PageFor(c, "Kill switches")
	return Render(c, http.StatusOK, page, views.Switches(page, v))
}

// mcpSwitchRows lists the MCP servers and the tools they still list, with
// their switches and, for those off, why.
func mcpSwitchRows(ctx context.Context, q store.Querier) (servers, tools []views.MCPSwitchRow, err error) {
	all, err := mcpservers.List(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	off := map[string]bool{}
	for _, s := range all {
		row := views.MCPSwitchRow{Name: s.Name, Detail: s.URL, Enabled: s.Enabled}
		if !s.Enabled {
			off[s.Name] = true
			if row.Reason, err = mcpservers.OffReason(ctx, q, s.Name, ""); err != nil {
				return nil, nil, err
			}
		}
		servers = append(servers, row)
	}
	ts, err := mcpservers.AllTools(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range ts {
		row := views.MCPSwitchRow{Name: t.ExposedName(), Detail: views.MCPClass(t), Enabled: t.Enabled, ServerOff: off[t.Server]}
		if !t.Enabled {
			if row.Reason, err = mcpservers.OffReason(ctx, q, t.Server, t.Name); err != nil {
				return nil, nil, err
			}
		}
		tools = append(tools, row)
	}
	return servers, tools, nil
}
