package handlers

import (
	"context"
	"errors"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"

	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/views"
)

// SwitchOn switches a tool, skill, MCP server or MCP tool on again: one press, no confirmation
// (it restores what was running before). Pressing it again changes and
// records nothing.
func (h *Console) SwitchOn(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, switchChange); err != nil {
		return err
	}
	v, err := h.switchTarget(ctx, c.Param("kind"), c.Param("name"))
	if err != nil {
		return err
	}
	if kind := switchKinds[v.Kind]; kind != "" {
		if ch, err := h.govern(c, user, switchProposal(kind, v.Name, v.Enabled, true)); err != nil || ch != nil {
			return changeRedirect(c, ch, err)
		}
	}
	changed, err := h.pressSwitch(ctx, user, v.Kind, v.Name, true, "")
	if err != nil {
		return err
	}
	return seeOther(c, "/switches?done="+switchResult(v.Kind, true, changed))
}

// pressSwitch calls the runtime's (or the MCP servers') switch for kind: one transaction with
// its audit event.
func (h *Console) pressSwitch(ctx context.Context, user *identity.Principal, kind, name string, on bool, reason string) (bool, error) {
	switch kind {
	case views.SwitchSkill:
		return h.Runtime.SwitchSkill(ctx, principalActor(user), name, on, reason)
	case views.SwitchMCPServer:
		return mcpservers.SwitchServer(ctx, h.DB, principalActor(user), name, on, h.MCP.Redact(reason))
	case views.SwitchMCPTool:
		server, tool, _ := mcpservers.ParseExposedName(name)
		return mcpservers.SetToolEnabled(ctx, h.DB, principalActor(user), server, tool, on, h.MCP.Redact(reason))
	}
	return h.Runtime.SwitchTool(ctx, principalActor(user), name, on, reason)
}

// SwitchOnForTenant switches a tool back on for the one tenant it was
// switched off for (a runbook opened from an alert does that): one
// press, like every switch on. It needs only that tenant in scope.
func (h *Console) SwitchOnForTenant(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	slug := c.Param("tenant")
	if err := requireTenant(user, slug); err != nil {
		return err
	}
	t, err := tenants.BySlug(ctx, h.DB.Read(), slug)
	if errors.Is(err, store.ErrNotFound) {
		return problem.NotFound("not_found", "There is no tenant "+strconv.Quote(slug)+".")
	}
	if err != nil {
		return err
	}
	off, err := catalog.OffForTenant(ctx, h.DB.Read(), c.Param("name"), t.ID)
	if err != nil {
		return err
	}
	p := switchProposal(changes.ToolTenantSwitch, c.Param("name"), !off, true)
	p.TenantID, p.TenantSlug, p.Summary = t.ID, t.Slug, p.Summary+" for tenant "+t.Slug
	if ch, err := h.govern(c, user, p); err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := catalog.SwitchForTenant(ctx, h.DB, principalActor(user), c.Param("name"), t.ID, t.Slug, true, "")
	if errors.Is(err, store.ErrNotFound) {
		return problem.NotFound("not_found", "There is no tool "+strconv.Quote(c.Param("name"))+".")
	}
	if err != nil {
		return err
	}
	done := "tenant_tool_on"
	if !changed {
		done = "already_on"
	}
	return seeOther(c, "/switches?done="+done)
}

// switchKinds are the governed changes of the switches page's kinds.
var switchKinds = map[string]string{views.SwitchTool: changes.ToolSwitch, views.SwitchSkill: changes.SkillSwitch,
	views.SwitchMCPServer: changes.MCPServerSwitch, views.SwitchMCPTool: changes.MCPToolSwitch}

// switchProposal is a kill switch pressed: on, from wasOn.
func switchProposal(kind, name string, wasOn, on bool) changes.Proposal {
	what := "tool"
	switch kind {
	case changes.SkillSwitch:
		what = "skill"
	case changes.MCPServerSwitch:
		what = "MCP server"
	case changes.MCPToolSwitch:
		what = "MCP tool"
	}
	verb := "Switch off"
	if on {
		verb = "Switch on"
	}
	return changes.Proposal{Kind: kind, Subject: name, Summary: verb + " " + what + " " + name,
		Before: changes.Switch{On: wasOn}, After: changes.Switch{On: on}}
}
