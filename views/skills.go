package views

import (
	"net/url"

	"github.com/a-h/templ"
)

// SkillRow is one skill as the Skills pages show it.
type SkillRow struct {
	Name        string
	Description string
	Tools       []string
	MaxSteps    int
	Model       string // "" when the skill's Go plan drives it
	Source      string // "built-in" or the SKILL.md's path
	Hash        string // SHA-256 of the SKILL.md
	Enabled     bool   // its kill switch
	Reason      string // why it was switched off
	Owner       string // from its SKILL.md (owner:); "" for none
}

// SkillsView is the Skills index.
type SkillsView struct {
	Skills []SkillRow
}

// SkillView is one skill with its instructions. HTML is the instructions
// rendered by skills.RenderInstructions, raw HTML escaped.
type SkillView struct {
	Skill SkillRow
	HTML  string
}

// Body is the instructions without their first heading when it is the
// skill's name, which the page's h1 already shows.
func (v SkillView) Body() string {
	return withoutTitle(v.HTML, v.Skill.Name)
}

func skillURL(name string) templ.SafeURL {
	return templ.SafeURL("/skills/" + url.PathEscape(name))
}
