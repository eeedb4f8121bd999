package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/views"
)

// AuditTrail is one action's decision trail, for auditors, admins and
// on-call: the proposal and why it needed approval, then each step as the
// audit chain records it (with its seq), the effect ledger's record, and
// the reversals asked for, with their own steps. 404 when unknown, 403
// when its tenant is outside the user's scope.
func (h *Console) AuditTrail(c echo.Context) error {
	ctx := c.Request().Context()
	// One read snapshot, so that the action, its events and the ledger
	// are read as of the same moment and cannot contradict each other
	// because a step happened between two reads.
	tx, err := h.DB.Read().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("read the trail of %s: %w", c.Param("id"), err)
	}
	defer tx.Rollback()
	a, slug, err := actionInScope(ctx, tx, CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	v, err := loadTrail(ctx, h.DB, tx, a, slug)
	if err != nil {
		return err
	}
	page := PageFor(c, "Decision trail of "+a.ID)
	page.Active = "/audit"
	return Render(c, http.StatusOK, page, views.AuditTrail(page, v))
}

// trailPart is one action's share of a trail: the action, the events
// whose subject it is, oldest first, and its ledger record (nil without).
type trailPart struct {
	Action approvals.Action
	Events []audit.Event
	Ledger *ledger.Entry
}

// loadTrail reads what the trail of a is built from: its events, its
// decisions, its ledger record, its journey, and the same for each of
// its reversals.
func loadTrail(ctx context.Context, st *store.DB, q store.Querier, a approvals.Action, slug string) (views.TrailView, error) {
	v := views.TrailView{Action: a, TenantSlug: slug}
	main, err := loadTrailPart(ctx, q, a)
	if err != nil {
		return views.TrailView{}, err
	}
	parts := []trailPart{main}
	if v.Reversals, err = approvals.Compensations(ctx, q, a.ID); err != nil {
		return views.TrailView{}, err
	}
	slices.Reverse(v.Reversals) // oldest first, like the steps
	for _, r := range v.Reversals {
		p, err := loadTrailPart(ctx, q, r)
		if err != nil {
			return views.TrailView{}, err
		}
		parts = append(parts, p)
	}
	decisions, err := approvals.Decisions(ctx, q, a.ID)
	if err != nil {
		return views.TrailView{}, err
	}
	if a.Compensates != "" {
		o, err := approvals.Get(ctx, q, a.Compensates)
		switch {
		case err == nil:
			v.Original = &o
		case !errors.Is(err, store.ErrNotFound):
			return views.TrailView{}, err
		}
	}
	if a.JourneyID != "" {
		j, err := journeys.GetJourney(ctx, q, a.JourneyID)
		switch {
		case err == nil:
			v.Journey = &j
		case !errors.Is(err, store.ErrNotFound): // retention may have removed it
			return views.TrailView{}, err
		}
	}
	var events []audit.Event
	for _, p := range parts {
		events = append(events, p.Events...)
	}
	if v.Names, err = eventNames(ctx, st, events); err != nil {
		return views.TrailView{}, err
	}
	names, err := principals.NamesOf(ctx, st, []string{a.RequestedBy})
	if err != nil {
		return views.TrailView{}, err
	}
	for _, d := range decisions {
		// The name the approver went by when deciding, should they be
		// gone since.
		if _, ok := v.Names.Principals[d.PrincipalID]; !ok && d.PrincipalName != "" {
			v.Names.Principals[d.PrincipalID] = d.PrincipalName
		}
	}
	v.Names.Actions[a.ID] = a.Summary
	if v.Original != nil {
		v.Names.Actions[v.Original.ID] = v.Original.Summary
	}
	switch {
	case a.RequestedBy != "":
		v.Requester = names.Of(a.RequestedBy) + " (console user)"
	case a.KeyID != "":
		v.Requester = "Agent key " + a.KeyID
		k, err := keys.ByID(ctx, q, a.KeyID)
		switch {
		case err == nil:
			v.Requester = "Agent key " + strconv.Quote(k.Name) + " (" + a.KeyID + ")"
		case !errors.Is(err, store.ErrNotFound):
			return views.TrailView{}, err
		}
	default:
		v.Requester = "unknown"
	}
	v.Steps = trailSteps(parts)
	v.Ledger = main.Ledger
	v.Reconciliation, v.Reconciled = ledger.Reconciliation(a, main.Ledger)
	v.Warnings = approvals.TrailWarnings(main.Events, decisions)
	return v, nil
}

func loadTrailPart(ctx context.Context, q store.Querier, a approvals.Action) (trailPart, error) {
	p := trailPart{Action: a}
	var err error
	if p.Events, err = audit.Trail(ctx, q, "action", a.ID); err != nil {
		return trailPart{}, err
	}
	e, err := ledger.Get(ctx, q, a.IdempotencyKey)
	switch {
	case err == nil:
		p.Ledger = &e
	case !errors.Is(err, store.ErrNotFound):
		return trailPart{}, err
	}
	return p, nil
}

// stepTitles names the steps of an action by the verb that records them.
var stepTitles = map[string]string{
	"action.requested":         "Requested",
	"action.approval_recorded": "Approval recorded",
	"action.approved":          "Approved",
	"action.rejected":          "Rejected",
	"action.expired":           "Expired",
	"action.cancelled":         "Withdrawn",
	"action.executed":          "Executed",
	"action.failed":            "Failed",
}

// trailSteps puts the parts' events in chain order, each as a step with
// what the event alone does not say: how long execution took after the
// approval, what kind of failure a failure was, the receipt. An action
// running right now has no event yet; it ends the trail as "executing".
func trailSteps(parts []trailPart) []views.TrailStep {
	var steps []views.TrailStep
	for i, p := range parts {
		a := p.Action
		for _, e := range p.Events {
			s := views.TrailStep{
				Event: &e, Time: e.Time, Kind: strings.TrimPrefix(e.Verb, "action."),
				Title: stepTitles[e.Verb], ActionID: a.ID, Reversal: i > 0,
			}
			if s.Title == "" {
				s.Title = e.Verb
			}
			switch e.Verb {
			case "action.executed":
				s.Receipt = a.Receipt
				s.Notes = append(s.Notes, executionTiming(a, p.Ledger))
			case "action.failed":
				s.Notes = append(s.Notes, ledger.FailureKind(a, p.Ledger))
				if t := executionTiming(a, p.Ledger); t != "" {
					s.Notes = append(s.Notes, t)
				}
			}
			steps = append(steps, s)
		}
		if a.Status == approvals.StatusExecuting {
			s := views.TrailStep{Kind: approvals.StatusExecuting, Title: "Executing", ActionID: a.ID, Reversal: i > 0}
			if p.Ledger != nil {
				s.Time = p.Ledger.UpdatedAt
			}
			s.Notes = ledger.InFlight(p.Ledger)
			steps = append(steps, s)
		}
	}
	// Events in chain order; a step without one (running now) is the
	// newest of all.
	slices.SortStableFunc(steps, func(x, y views.TrailStep) int {
		switch {
		case x.Event == nil && y.Event == nil:
			return 0
		case x.Event == nil:
			return 1
		case y.Event == nil:
			return -1
		}
		return cmp.Compare(x.Event.Seq, y.Event.Seq)
	})
	return steps
}

// executionTiming puts ledger.TimingOf in words; "" when the action never
// ran.
func executionTiming(a approvals.Action, e *ledger.Entry) string {
	t := ledger.TimingOf(a, e)
	var parts []string
	if t.Timed {
		parts = append(parts, "Done "+views.Latency(t.AfterApproval)+" after the final approval")
	}
	if t.Calls > 0 {
		parts = append(parts, ledger.Calls(t.Calls))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// The trail's rules are the ledger's and approvals'; these are the names
// the handler's tests know them by.
var (
	failureKind          = ledger.FailureKind
	ledgerReconciliation = ledger.Reconciliation
)

func trailWarnings(p trailPart, decisions []approvals.Decided) []string {
	return approvals.TrailWarnings(p.Events, decisions)
}
