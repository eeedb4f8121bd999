package handlers

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// maxSwitchReason bounds the reason typed for a switch (it is kept in the
// audit trail for good).
const maxSwitchReason = 500

// SwitchOffConfirm asks before switching a tool, skill, MCP server or MCP
// tool off, saying
// exactly what stops, and asks for the reason.
func (h *Console) SwitchOffConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), switchChange); err != nil {
		return err
	}
	v, err := h.switchTarget(c.Request().Context(), c.Param("kind"), c.Param("name"))
	if err != nil {
		return err
	}
	return renderSwitchOff(c, http.StatusOK, v)
}

// SwitchOff switches a tool or skill off with the reason given. Pressing
// it again changes and records nothing.
func (h *Console) SwitchOff(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, switchChange); err != nil {
		return err
	}
	v, err := h.switchTarget(ctx, c.Param("kind"), c.Param("name"))
	if err != nil {
		return err
	}
	v.Reason = strings.TrimSpace(c.FormValue("reason"))
	if msg := checkSwitchReason(v.Reason); msg != "" {
		v.Errors = views.FieldErrors{"reason": msg}
		return renderSwitchOff(c, http.StatusUnprocessableEntity, v)
	}
	changed, err := h.pressSwitch(ctx, user, v.Kind, v.Name, false, v.Reason)
	if err != nil {
		return err
	}
	return seeOther(c, "/switches?done="+switchResult(v.Kind, false, changed))
}

// checkSwitchReason says what is wrong with the reason for switching
// something off, or "" when it will do.
func checkSwitchReason(reason string) string {
	switch {
	case reason == "":
		return "Say why it is switched off: the reason goes into the audit trail and tells whoever switches it back on."
	case utf8.RuneCountInString(reason) > maxSwitchReason:
		return "Keep the reason to " + strconv.Itoa(maxSwitchReason) + " characters."
	}
	return ""
}

func renderSwitchOff(c echo.Context, status int, v views.SwitchOffView) error {
	page := PageFor(c, "Switch off "+v.Name)
	page.Active = "/switches"
	return Render(c, status, page, views.SwitchOffConfirm(page, v))
}

// switchTarget finds the tool, skill, MCP server or MCP tool a switch URL
// names: 404 when there
// is none.
func (h *Console) switchTarget(ctx context.Context, kind, name string) (views.SwitchOffView, error) {
	v := views.SwitchOffView{Kind: kind, Name: name}
	switch kind {
	case views.SwitchTool:
		t, err := catalog.Get(ctx, h.DB.Read(), name)
		if err != nil {
			return v, err
		}
		v.Enabled = t.Enabled
		for _, s := range h.Runtime.Skills() {
			if slices.Contains(s.Tools, name) {
				v.Skills = append(v.Skills, s.Name)
			}
		}
		return v, nil
	case views.SwitchMCPServer:
		s, err := mcpservers.Get(ctx, h.DB.Read(), name)
		if err != nil {
			return v, err
		}
		ts, err := mcpservers.Tools(ctx, h.DB.Read(), name)
		for _, t := range ts {
			if !t.Gone {
				v.Tools++
			}
		}
		v.Enabled = s.Enabled
		return v, err
	case views.SwitchMCPTool:
		server, tool, ok := mcpservers.ParseExposedName(name)
		if !ok {
			return v, mcpservers.ErrToolNotFound
		}
		t, err := mcpservers.GetTool(ctx, h.DB.Read(), server, tool)
		v.Enabled = t.Enabled
		return v, err
	case views.SwitchSkill:
		for _, s := range h.Runtime.Skills() {
			if s.Name == name {
				on, err := catalog.SkillEnabled(ctx, h.DB.Read(), name)
				v.Enabled = on
				return v, err
			}
		}
		return v, problem.NotFound("not_found", "There is no skill "+strconv.Quote(name)+".")
	}
	return v, problem.NotFound("not_found", "There is no such switch.")
}

// switchResult is the notice after a press.
func switchResult(kind string, on, changed bool) string {
	switch {
	case !changed && on:
		return "already_on"
	case !changed:
		return "already_off"
	}
	what := map[string]string{views.SwitchSkill: "skill", views.SwitchMCPServer: "mcp_server", views.SwitchMCPTool: "mcp_tool"}[kind]
	if what == "" {
		what = "tool"
	}
	if on {
		return what + "_on"
	}
	return what + "_off"
}
