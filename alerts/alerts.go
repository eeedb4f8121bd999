// Package alerts tells on-call when something needs them: a skill whose
// journeys fail too often or too slowly, or a tenant about to run out of
// budget. Each kind of alert links to the runbook that handles it.
//
// The runtime evaluates the rules every minute (WARDEN_ALERT_INTERVAL):
//
//	rep, err := alerts.Evaluate(ctx, db, time.Now())
//
// An alert fires when its condition first holds and resolves when it
// clears; both are one transaction with their audit event (alert.fired,
// alert.resolved), and a firing alert is never fired twice. The console
// lists them with Firing and Resolved, and admins change a skill's
// thresholds with SetRule (alert.rule_set).
//
// Rules, per skill (DefaultRule until an admin sets one):
//   - failure rate: at least FailurePercent of the journeys that ended in
//     the last Window failed, counted only once MinJourneys ended (so one
//     failure on a quiet skill does not page anyone);
//   - p99 latency: the 99th percentile of those journeys' latency is
//     P99Latency or more, with the same minimum;
//
// per agent and environment: route accuracy, when fewer than
// AlertPercent of its last AlertLastN labelled journeys were routed right
// (routelabels.Settings; nothing fires before AlertLastN labels exist);
// per tenant: budget burn, when spent plus reserved reaches the
// budget's own alert percentage (80% unless set on the Budgets page) of
// the period's limit; and per model deployment: model overrun, when a
// call it answered in the last OverrunWindow cost more than its
// reservation (the upstream reported more usage than the request could
// bill: a lying or buggy upstream, or a context window or output cap set
// too low). The call was charged what was reported; the alert resolves
// once OverrunWindow has passed without another.
package alerts

import (
	"time"
)

// Kinds of alert.
const (
	FailureRate  = "failure_rate"
	P99Latency   = "p99_latency"
	BudgetBurn   = "budget_burn"
	ModelOverrun = "model_overrun"
	// RouteAccuracy: fewer of an agent's last labelled journeys were
	// routed right than its threshold (routelabels.Settings).
	RouteAccuracy = "route_accuracy"
)

// Kinds lists every kind of alert, as /alerts shows them and runbooks
// name them in their front matter.
var Kinds = []string{FailureRate, P99Latency, BudgetBurn, ModelOverrun, RouteAccuracy}

// OverrunWindow is how long one model call that cost more than its
// reservation keeps its deployment's model_overrun alert firing.
const OverrunWindow = 24 * time.Hour

// Runbook is the id of the shipped runbook that handles an alert of kind
// when nothing more is known of it (its page is /runbooks/<id>). The
// console proposes the runbook that fits what failed (runbooks.Set.For
// with the alert's Cause); this is what the audit events record.
func Runbook(kind string) string {
	switch kind {
	case FailureRate:
		return "tool-provider-outage"
	case P99Latency:
		return "slow-journeys"
	case BudgetBurn, ModelOverrun:
		return "runaway-spend"
	case RouteAccuracy:
		return "bad-release-rollback"
	}
	return ""
}

// Alert is one alert, firing (Resolved nil) or resolved.
type Alert struct {
	ID        string
	Kind      string
	Subject   string // the skill, or the tenant id for budget burn
	Tenant    string // the tenant's slug, for budget burn
	Value     int64  // percent, or milliseconds for p99 latency
	Threshold int64
	FiredAt   time.Time
	Resolved  *time.Time
	Ack       *Ack // nil until someone acknowledges it
}

// Ack is who acknowledged an alert, when, and their note.
type Ack struct {
	By, ByName string
	At         time.Time
	Note       string
}

// Runbook is the id of the runbook for the alert.
func (a Alert) Runbook() string { return Runbook(a.Kind) }

// RunbookURL is the page of the alert's runbook.
func (a Alert) RunbookURL() string { return "/runbooks/" + a.Runbook() }

// What says what the alert is about, for people.
func (a Alert) What() string {
	switch a.Kind {
	case FailureRate:
		return "Failure rate of skill " + a.Subject
	case P99Latency:
		return "p99 latency of skill " + a.Subject
	case BudgetBurn:
		t := a.Tenant
		if t == "" {
			t = a.Subject
		}
		return "Budget of tenant " + t
	case ModelOverrun:
		return "Model deployment " + a.Subject + " billed beyond its reservations"
	case RouteAccuracy:
		return "Route accuracy of " + a.Subject + " (people's labels)"
	}
	return a.Kind + " " + a.Subject
}

// Unit is how Value and Threshold read: "%", " ms" or " calls".
func (a Alert) Unit() string {
	switch a.Kind {
	case P99Latency:
		return " ms"
	case ModelOverrun:
		return " calls"
	}
	return "%"
}

// Rule is a skill's thresholds.
type Rule struct {
	Skill          string
	FailurePercent int           // fires at this share of failed journeys, 1–100
	P99Latency     time.Duration // fires when the p99 reaches it
	Window         time.Duration // how far back journeys count
	MinJourneys    int           // fewer ended journeys than this fire nothing
	Custom         bool          // set by an admin, not the default
}

// DefaultRule is what a skill is held to until an admin sets its rule:
// one journey in five failing, or a p99 of 10 s, over the last 15 minutes
// once at least 20 journeys ended.
func DefaultRule(skill string) Rule {
	return Rule{Skill: skill, FailurePercent: 20, P99Latency: 10 * time.Second, Window: 15 * time.Minute, MinJourneys: 20}
}

// Validate returns one message per bad field, keyed by form field.
func (r Rule) Validate() map[string]string {
	errs := map[string]string{}
	if r.FailurePercent < 1 || r.FailurePercent > 100 {
		errs["failure_percent"] = "The failure rate is a percentage from 1 to 100."
	}
	if r.P99Latency < time.Millisecond || r.P99Latency > time.Hour {
		errs["p99_ms"] = "The p99 latency is a number of milliseconds from 1 to 3600000."
	}
	if r.Window < time.Minute || r.Window > 24*time.Hour || r.Window%time.Minute != 0 {
		errs["window_minutes"] = "The window is a whole number of minutes from 1 to 1440."
	}
	if r.MinJourneys < 1 || r.MinJourneys > 100_000 {
		errs["min_journeys"] = "The minimum is a whole number of journeys from 1 to 100000."
	}
	return errs
}
