package views

import (
	"net/url"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/search"
)

// SearchView is the search page: what was typed, and what it found in the
// viewer's scope.
type SearchView struct {
	Query   string
	Refusal string // what was typed wrong; nothing is searched then
	Results search.Results
	Names   EventNames // the audit events' actors and subjects
	// Searched is false on the page opened without a query.
	Searched bool
	// Journeys and Audit say which kinds the viewer may see, so the page
	// lists only those.
	Journeys, Audit bool
	// ActionsURL is the Actions list filtered to the same target or
	// amount, where the search can have more than a page of actions.
	ActionsURL string
	Now        time.Time
}

// SearchActionsURL is the Actions list filtered by target, or by the
// amount min = max (in major units, as its filter reads it).
func SearchActionsURL(target, amount string) string {
	q := url.Values{}
	if target != "" {
		q.Set("target", target)
	}
	if amount != "" {
		q.Set("min", amount)
		q.Set("max", amount)
	}
	return "/actions?" + q.Encode()
}

// searchWho names the people and keys the words matched.
func searchWho(r search.Results) string {
	var names []string
	for _, p := range r.People {
		n := p.Name
		if n == "" {
			n = p.Email
		}
		names = append(names, n)
	}
	for _, k := range r.Keys {
		names = append(names, "key "+k.Name)
	}
	return joinAnd(names)
}

// joinAnd writes "a", "a and b", "a, b and c".
func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	out := xs[0]
	for _, x := range xs[1 : len(xs)-1] {
		out += ", " + x
	}
	return out + " and " + xs[len(xs)-1]
}

// eventTrailURL is the audit trail filtered to the event's subject.
func eventTrailURL(e audit.Event) string {
	q := url.Values{"subject_type": {e.Subject.Type}, "subject_id": {e.Subject.ID}}
	return "/audit?" + q.Encode()
}
