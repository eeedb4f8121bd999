package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/views"
)

// switchChange is what the kill switches change: every tenant's calls.
const switchChange = "A kill switch"

var switchNotices = map[string]string{
	"tool_off":    "Tool switched off: its calls now fail with 403 tool_disabled.",
	"tool_on":     "Tool switched on: its calls run again.",
	"skill_off":   "Skill switched off: new journeys for it are refused with 422 skill_disabled.",
	"skill_on":    "Skill switched on: journeys are routed to it again.",
	"already_off": "It was already off; nothing changed and nothing was recorded.",
	"already_on":  "It was already on; nothing changed and nothing was recorded.",
}

// SwitchList shows every tool and skill with its kill switch.
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
	page := PageFor(c, "Kill switches")
	return Render(c, http.StatusOK, page, views.Switches(page, v))
}
