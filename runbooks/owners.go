package runbooks

import "slices"

// Owned is a runbook that names something, with its owner: where an
// action's page finds who owns its tool or skill ("owner: finance-oncall").
// Tools and skills carry no owner of their own; the runbooks that act on
// them do.
type Owned struct {
	Owner     string
	RunbookID string
	Title     string
}

// OwnersOf lists the runbooks whose actions name tool (an argument
// tool: NAME) or skill (skill: NAME), or whose subjects name either, in
// the set's order (most severe first), one per owner.
func (s *Set) OwnersOf(tool, skill string) []Owned {
	var out []Owned
	for _, r := range s.All() {
		if r.Owner == "" || slices.ContainsFunc(out, func(o Owned) bool { return o.Owner == r.Owner }) || !r.names(tool, skill) {
			continue
		}
		out = append(out, Owned{Owner: r.Owner, RunbookID: r.ID, Title: r.Title})
	}
	return out
}

func (r Runbook) names(tool, skill string) bool {
	if (tool != "" && slices.Contains(r.Subjects, tool)) || (skill != "" && slices.Contains(r.Subjects, skill)) {
		return true
	}
	for _, a := range r.Actions {
		if (tool != "" && a.Args["tool"] == tool) || (skill != "" && a.Args["skill"] == skill) {
			return true
		}
	}
	return false
}
