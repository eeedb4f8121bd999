package views

import (
	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/store"
)

// TracesView is one page of journeys.
type TracesView struct {
	Journeys []runtime.Journey
	Tenants  []store.Tenant // in scope, for the filter
	Filter   TraceFilter
	Statuses []string
	NextPage string // older journeys, empty on the last page
	PrevPage string // newer journeys, empty on the first page
	Filtered bool   // any filter is set
}

// TraceFilter is the traces page's filter form.
type TraceFilter struct {
	Tenant, Status, Skill, From, To string
}

// TraceView is one journey with its steps.
type TraceView struct {
	Journey       runtime.Journey
	PrincipalName string // when a console user started it
	// ActionID is the high-impact action the journey asked for, when it
	// asked for one: the trace links to its decision trail.
	ActionID string
}
