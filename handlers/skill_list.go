package handlers

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/views"
)

// SkillList lists the skills journeys are routed to, with where each was
// read from, the hash of its SKILL.md and its kill switch.
func (h *Console) SkillList(c echo.Context) error {
	rows, err := h.skillRows(c.Request().Context())
	if err != nil {
		return err
	}
	page := PageFor(c, "Skills")
	page.Active = "/skills"
	return Render(c, http.StatusOK, page, views.Skills(page, views.SkillsView{Skills: rows}))
}

// SkillShow shows one skill with its instructions.
func (h *Console) SkillShow(c echo.Context) error {
	name := c.Param("name")
	rows, err := h.skillRows(c.Request().Context())
	if err != nil {
		return err
	}
	for i, s := range h.Runtime.Skills() {
		if s.Name != name {
			continue
		}
		html, err := skills.RenderInstructions(s.Instructions)
		if err != nil {
			return err
		}
		page := PageFor(c, s.Name)
		page.Active = "/skills"
		return Render(c, http.StatusOK, page, views.SkillShow(page, views.SkillView{Skill: rows[i], HTML: html}))
	}
	return problem.NotFound("not_found", "There is no skill "+strconv.Quote(name)+".")
}

// skillRows are the runtime's skills, in routing order, with their kill
// switches.
func (h *Console) skillRows(ctx context.Context) ([]views.SkillRow, error) {
	stored, err := catalog.SkillSwitches(ctx, h.DB.Read())
	if err != nil {
		return nil, err
	}
	var rows []views.SkillRow
	for _, s := range h.Runtime.Skills() {
		row := views.SkillRow{Name: s.Name, Description: s.Description, Tools: s.Tools, MaxSteps: s.MaxSteps,
			Model: s.Model, Source: s.Source, Hash: s.Hash, Enabled: true, Owner: s.Owner}
		if sw, ok := stored[s.Name]; ok {
			row.Enabled, row.Reason = sw.Enabled, sw.Reason
		}
		rows = append(rows, row)
	}
	return rows, nil
}
