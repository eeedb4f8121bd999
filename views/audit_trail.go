package views

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
)

// TrailView is one action's decision trail: what was asked and why, then
// every step in order, each with its audit seq, and how the effect ledger
// and any reversal ended.
type TrailView struct {
	Action     approvals.Action
	TenantSlug string
	// Requester names who asked: the agent's key, or the console user
	// who asked for a reversal.
	Requester string
	Journey   *journeys.Journey // the journey that asked; nil without one, or once retention removed it
	Original  *approvals.Action // the action this one reverses
	Steps     []TrailStep       // in order
	// Ledger is the effect's record in the ledger, nil when there is none
	// (the action was never approved, or the agent executes it itself).
	Ledger *ledger.Entry
	// Reconciliation says whether the ledger and the action agree about
	// the effect, and Reconciled whether that is a settled agreement.
	Reconciliation string
	Reconciled     bool
	Reversals      []approvals.Action // oldest first
	Names          EventNames
	// Warnings are disagreements between the records the trail is built
	// from, which an auditor should follow up.
	Warnings []string
}

// TrailStep is one step of a decision trail.
type TrailStep struct {
	// Event is the audit event that records the step; nil for a step
	// the chain does not record (an action that is running now).
	Event    *audit.Event
	Time     time.Time
	Kind     string // "requested", "approved", "executed", ... "executing"
	Title    string
	ActionID string // the action the step belongs to: this one or a reversal
	Reversal bool   // the step belongs to a reversal of this action
	// Notes add what the event alone does not say: timings, what kind of
	// failure it was, who the approver was when the name changed since.
	Notes   []string
	Receipt json.RawMessage // the receipt as stored (redacted), on an executed step
}

// Seq is the step's audit seq, "—" for a step the chain does not record.
func (s TrailStep) Seq() string {
	if s.Event == nil {
		return "—"
	}
	return strconv.FormatInt(s.Event.Seq, 10)
}

// Sentence says what happened in the step.
func (s TrailStep) Sentence(n EventNames) string {
	if s.Event == nil {
		return "Action " + s.ActionID + " is running now."
	}
	return eventSentence(*s.Event, n)
}

// approvalsNeeded says how many approvers the action needs, in words.
func approvalsNeeded(a approvals.Action) string {
	if a.ApprovalsRequired == 1 {
		return "1 approver"
	}
	return strconv.Itoa(a.ApprovalsRequired) + " approvers"
}

// inNav reports whether the navigation offers path. The navigation is
// built from the route table with the user's roles, so a link to a page in
// it is shown only to those who may follow it (on-call reads trails but
// not the audit log).
func inNav(p Page, path string) bool {
	for _, item := range p.Nav {
		if item.Path == path {
			return true
		}
	}
	return false
}
