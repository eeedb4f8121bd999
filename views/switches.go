package views

import (
	"strings"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/tools"
)

// Kinds of kill switch, as they appear in the switches' URLs.
const (
	SwitchTool  = "tools"
	SwitchSkill = "skills"
)

// SwitchesView is the Kill switches page: every tool and skill with its
// switch, for on-call in an incident.
type SwitchesView struct {
	Tools []tools.Tool
	// ToolSwitches say why a tool that is off was switched off, by name.
	ToolSwitches map[string]catalog.SwitchState
	Skills       []SkillSwitchRow
	Notice       string
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
	// Skills lists, for a tool, the skills that call it.
	Skills []string
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
