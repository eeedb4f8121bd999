package views

import (
	"github.com/wardenhq/warden/changes"
	"net/url"
	"strings"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/tools"
)

// Kinds of kill switch, as they appear in the switches' URLs.
const (
	SwitchTool      = "tools"
	SwitchSkill     = "skills"
	SwitchMCPServer = "mcp-servers" // name: the server
	SwitchMCPTool   = "mcp-tools"   // name: SERVER__TOOL
)

// SwitchesView is the Kill switches page: every tool and skill with its
// switch, for on-call in an incident.
type SwitchesView struct {
	// Pending are the changes waiting for a second admin on these
	// switches (switching something back on).
	Pending []changes.Change
	Tools   []tools.Tool
	// ToolSwitches say why a tool that is off was switched off, by name.
	ToolSwitches map[string]catalog.SwitchState
	Skills       []SkillSwitchRow
	// MCPServers and MCPTools are the upstream MCP servers and their
	// tools still listed (SERVER__TOOL), each with its own switch.
	MCPServers []MCPSwitchRow
	MCPTools   []MCPSwitchRow
	// TenantOff are tools switched off for one tenant only (a runbook
	// opened from an alert does that), each with a button on again.
	TenantOff []catalog.TenantSwitch
	Notice    string
}

func tenantSwitchOnURL(s catalog.TenantSwitch) templ.SafeURL {
	return templ.SafeURL("/switches/tool/" + url.PathEscape(s.Tool) + "/tenants/" + url.PathEscape(s.TenantSlug) + "/on")
}

// MCPSwitchRow is one MCP server or tool and its switch.
type MCPSwitchRow struct {
	Name    string // the server, or SERVER__TOOL
	Detail  string // a server's URL, a tool's class
	Enabled bool
	Reason  string // why it was last switched off, when it is off
	// ServerOff is true for a tool whose server is off: its calls are
	// refused whatever its own switch says.
	ServerOff bool
}

// SkillSwitchRow is one skill and its switch.
type SkillSwitchRow struct {
	Name        string
	Description string
	Tools       []string
	Enabled     bool
	Reason      string // why it was last switched off, when it is off
}

// SwitchOffView asks before switching a tool or skill off, with the
// reason the switch needs.
type SwitchOffView struct {
	Kind    string // SwitchTool or SwitchSkill
	Name    string
	Enabled bool // on now; off: confirming changes nothing
	// Skills lists, for a tool, the skills that call it; Tools, for an
	// MCP server, how many tools it lists.
	Skills []string
	Tools  int
	Reason string
	Errors FieldErrors
}

// usedBy names the skills that call a tool: " (skill refunds)".
func usedBy(skills []string) string {
	switch len(skills) {
	case 0:
		return ""
	case 1:
		return " (skill " + skills[0] + ")"
	}
	return " (skills " + strings.Join(skills, ", ") + ")"
}

func switchPath(kind, name, verb string) templ.SafeURL {
	return templ.SafeURL("/switches/" + kind + "/" + name + "/" + verb)
}

func (v SwitchOffView) confirm() ConfirmView {
	c := ConfirmView{
		Back:      "/switches",
		BackLabel: "Kill switches",
		Title:     switchOffTitle(v.Name),
		Effect:    switchOffEffect(v),
		Fields:    switchReason(v),
		Action:    switchPath(v.Kind, v.Name, "off"),
		Submit:    "Switch off " + v.Name,
		SubmitID:  "confirm-switch-off",
		Danger:    true,
		Cancel:    "/switches",
	}
	if !v.Enabled {
		c.Warning = text(v.Name + " is already off. Confirming changes nothing.")
	}
	return c
}
