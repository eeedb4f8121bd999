package search

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// Limit is how many of each kind a search shows, newest first.
const Limit = 20

// maxNames is how many people and keys a name can stand for.
const maxNames = 5

// Scope is what the viewer may see: the console's list pages' rules.
type Scope struct {
	TenantIDs   []string // nil: every tenant
	TenantSlugs []string // the same tenants by slug (audit events name them so); nil: every tenant
	Journeys    bool     // the viewer may open journeys (Traces)
	Audit       bool     // the viewer may read the audit trail
}

func (s Scope) has(tenantID string) bool {
	return s.TenantIDs == nil || slices.Contains(s.TenantIDs, tenantID)
}

// Results are what a search found in scope, each kind newest first.
type Results struct {
	Actions  []approvals.Row
	Journeys []journeys.Journey
	Events   []audit.Event
	// More* say a kind had more than Limit matches.
	MoreActions, MoreJourneys, MoreEvents bool
	// People and Keys are who the words named, for the page to say why
	// their actions are listed.
	People []principals.Principal
	Keys   []keys.Key
}

// Empty reports whether nothing was found.
func (r Results) Empty() bool {
	return len(r.Actions) == 0 && len(r.Journeys) == 0 && len(r.Events) == 0
}

// Run finds what q names within scope s, reading db (a read pool). r keys targets as the runtime
// does (approvals.TargetOf); without it targets are not searched.
func Run(ctx context.Context, db store.Querier, r *redact.Redactor, s Scope, q Query) (Results, error) {
	f := finder{ctx: ctx, q: db, s: s, actions: map[string]approvals.Row{}, journeys: map[string]journeys.Journey{}, events: map[int64]audit.Event{}}
	switch {
	case q.ActionID != "":
		f.browse(approvals.BrowseFilter{ID: q.ActionID})
	case q.JourneyID != "":
		f.journey(q.JourneyID)
		f.browse(approvals.BrowseFilter{JourneyID: q.JourneyID})
	default:
		if q.Words != "" && r != nil {
			if t := approvals.TargetOf(r, q.Words); t.Key != "" {
				f.browse(approvals.BrowseFilter{TargetKey: t.Key})
			}
		}
		for _, a := range q.Amounts {
			f.browse(approvals.BrowseFilter{MinMinor: &a.Minor, MaxMinor: &a.Minor, Currencies: a.Currencies, NotCurrencies: a.NotCurrencies})
		}
		if q.Words != "" {
			f.names(q.Words)
		}
	}
	if f.err != nil {
		return Results{}, f.err
	}
	shown := sortedValues(f.actions, func(a, b approvals.Row) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	more := len(shown) > Limit
	shown = shown[:min(len(shown), Limit)]
	// The journeys that asked for the actions shown, and what the trail
	// says about those actions.
	for _, a := range shown {
		if a.JourneyID != "" {
			f.journey(a.JourneyID)
		}
		f.trail(audit.Query{SubjectType: "action", SubjectID: a.ID})
	}
	if f.err != nil {
		return Results{}, f.err
	}
	res := f.res
	res.Actions, res.MoreActions = shown, res.MoreActions || more
	res.Journeys = sortedValues(f.journeys, func(a, b journeys.Journey) int { return strings.Compare(b.ID, a.ID) })
	res.MoreJourneys = res.MoreJourneys || len(res.Journeys) > Limit
	res.Journeys = res.Journeys[:min(len(res.Journeys), Limit)]
	res.Events = sortedValues(f.events, func(a, b audit.Event) int { return cmp.Compare(b.Seq, a.Seq) })
	res.MoreEvents = res.MoreEvents || len(res.Events) > Limit
	res.Events = res.Events[:min(len(res.Events), Limit)]
	return res, nil
}

// finder gathers matches of each kind; the first error stops it.
type finder struct {
	ctx      context.Context
	q        store.Querier
	s        Scope
	actions  map[string]approvals.Row
	journeys map[string]journeys.Journey
	events   map[int64]audit.Event
	res      Results
	found    int // rows found so far, of every kind
	err      error
}

func (f *finder) browse(bf approvals.BrowseFilter) {
	if f.err != nil {
		return
	}
	bf.TenantIDs, bf.Page = f.s.TenantIDs, store.Page{Size: Limit}
	p, err := approvals.Browse(f.ctx, f.q, bf)
	if err != nil {
		f.err = err
		return
	}
	f.addActions(p.Rows)
	f.res.MoreActions = f.res.MoreActions || p.Next != nil
}

func (f *finder) addActions(rows []approvals.Row) {
	f.found += len(rows)
	for _, a := range rows {
		f.actions[a.ID] = a
	}
}

// journey adds one journey by id, when the viewer may open it.
func (f *finder) journey(id string) {
	if f.err != nil || !f.s.Journeys {
		return
	}
	if _, seen := f.journeys[id]; seen {
		return
	}
	j, err := journeys.GetJourney(f.ctx, f.q, id)
	switch {
	case errors.Is(err, store.ErrNotFound): // unknown, or removed by retention
	case err != nil:
		f.err = err
	case f.s.has(j.TenantID):
		f.journeys[id] = j
	}
}

// trail adds the audit events q selects in the viewer's tenants, when
// the viewer may read the trail.
func (f *finder) trail(q audit.Query) {
	if f.err != nil || !f.s.Audit {
		return
	}
	q.Tenants = f.s.TenantSlugs
	p, err := audit.Page(f.ctx, f.q, q, store.Page{Size: Limit})
	if err != nil {
		f.err = err
		return
	}
	f.found += len(p.Rows)
	for _, e := range p.Rows {
		f.events[e.Seq] = e
	}
	f.res.MoreEvents = f.res.MoreEvents || p.Next != nil
}

// names searches the words as the start of people's and keys' names:
// what those people asked for or decided, what those keys asked for.
func (f *finder) names(words string) {
	people, err := principals.Find(f.ctx, f.q, words, maxNames)
	if err != nil {
		f.err = err
		return
	}
	// A person is named only with something of theirs the viewer may see:
	// who else has signed in is not the search's to tell.
	for _, p := range people {
		before := f.found
		f.browse(approvals.BrowseFilter{RequestedBy: p.ID})
		if f.err == nil {
			var decided []approvals.Row
			decided, f.err = approvals.DecidedBy(f.ctx, f.q, p.ID, f.s.TenantIDs, Limit)
			f.addActions(decided)
		}
		f.trail(audit.Query{ActorID: p.ID})
		if f.found > before {
			f.res.People = append(f.res.People, p)
		}
	}
	if f.err != nil {
		return
	}
	ks, err := keys.Find(f.ctx, f.q, words, f.s.TenantIDs, maxNames)
	if err != nil {
		f.err = err
		return
	}
	f.res.Keys = ks
	for _, k := range ks {
		f.browse(approvals.BrowseFilter{KeyID: k.ID})
		f.trail(audit.Query{ActorID: k.ID})
		if f.err != nil || !f.s.Journeys {
			continue
		}
		js, err := journeys.ListJourneys(f.ctx, f.q, journeys.Filter{TenantIDs: f.s.TenantIDs, KeyID: k.ID, Page: store.Page{Size: Limit}})
		if err != nil {
			f.err = err
			return
		}
		for _, j := range js.Rows {
			f.journeys[j.ID] = j
		}
		f.res.MoreJourneys = f.res.MoreJourneys || js.Next != nil
	}
}

func sortedValues[K comparable, V any](m map[K]V, cmp func(a, b V) int) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, cmp)
	return out
}
