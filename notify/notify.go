// Package notify reaches people where they already are: it tells
// approvers that an action waits for them and pages on-call when an alert
// fires, through channels admins configure on the Notifications page
// (e-mail over SMTP, Slack-compatible and Microsoft Teams webhooks, a
// generic signed webhook, Alertmanager, PagerDuty).
//
// The domain packages call it inside the transaction of what happened, and
// that is all they do; nothing is sent on their path:
//
//	notify.ActionPending(ctx, tx, notify.ActionInfo{...}) // approvals.Create
//	notify.AlertChanged(ctx, tx, notify.AlertInfo{...})  // alerts: fired or resolved
//
// Each call finds the routes of the event and tenant (routes.go), renders
// one Message per channel from what the console shows an approver (never
// arguments or personal data), and writes it with a delivery job
// (platform/jobs) in the caller's transaction: both commit or neither
// does. The runtime's queue then works the job (Service.HandleDeliver):
// each channel behind its own circuit breaker and bulkhead (tools.Guard),
// retried with the queue's backoff, given up after GiveUpAfter, when the
// job lands on the status page with Retry. Every delivery and every
// give-up is audited without the message. The message id (the delivery's
// id) is the same on every attempt, so receivers drop duplicates.
//
// Alerts page on-call once per dedup key: a resolution waits out the
// quiet time (Settings) before it is sent, and a re-fire within it
// cancels the resolution instead of paging again (pages.go).
package notify

import (
	"time"
)

// Kinds of channel.
const (
	Email        = "email"
	Slack        = "slack" // Slack, Mattermost, Rocket.Chat incoming webhooks
	Teams        = "teams" // Microsoft Teams workflow webhook
	Webhook      = "webhook"
	Alertmanager = "alertmanager"
	PagerDuty    = "pagerduty"
)

// Kinds lists the channel kinds in the order the console offers them.
var Kinds = []string{Email, Slack, Teams, Webhook, Alertmanager, PagerDuty}

// KindLabel names a kind for people.
func KindLabel(kind string) string {
	switch kind {
	case Email:
		return "E-mail (SMTP)"
	case Slack:
		return "Slack-compatible webhook"
	case Teams:
		return "Microsoft Teams workflow"
	case Webhook:
		return "Generic webhook (signed)"
	case Alertmanager:
		return "Alertmanager"
	case PagerDuty:
		return "PagerDuty Events v2"
	}
	return kind
}

// Events that routes choose.
const (
	EventActionPending = "action.pending"
	EventEscalation    = "action.escalated"
	EventAssigned      = "action.assigned"
	EventAlert         = "alert"
	EventReview        = "execution.review"
	EventChangePending = "change.pending"
	EventTest          = "test"
)

// Events lists the routable events in the order the console offers them.
var Events = []string{EventActionPending, EventAssigned, EventEscalation, EventAlert, EventReview, EventChangePending}

// EventLabel names an event for people.
func EventLabel(ev string) string {
	switch ev {
	case EventActionPending:
		return "New pending action"
	case EventAssigned:
		return "Action taken by an approver"
	case EventEscalation:
		return "Escalation or expiry of an undecided action"
	case EventAlert:
		return "Alert firing and resolving"
	case EventReview:
		return "Failed execution needing review"
	case EventChangePending:
		return "Control-plane change waiting for a second admin"
	case EventTest:
		return "Test message"
	}
	return ev
}

// Severities of alerts, least first.
var Severities = []string{"info", "warning", "critical"}

func severityRank(s string) int {
	for i, x := range Severities {
		if x == s {
			return i
		}
	}
	return 0
}

// GiveUpAfter is how long a message is retried before its delivery is
// given up and its job listed on the status page with Retry.
const GiveUpAfter = 24 * time.Hour

// Message is one notification as every channel renders it: only what the
// console shows an approver or on-call, and a link to the console page.
type Message struct {
	// ID is the stable message id: the same on every attempt, sent as
	// X-Warden-Message-Id, Message-ID, the webhook's "id".
	ID      string    `json:"id"`
	Event   string    `json:"event"`
	Title   string    `json:"title"`
	Summary string    `json:"summary,omitempty"`
	Tenant  string    `json:"tenant,omitempty"` // the tenant's slug
	Fields  []Field   `json:"fields,omitempty"`
	Link    string    `json:"link"` // the console path; made absolute with the base URL when sent
	At      time.Time `json:"at"`
	// Alert is set for alert messages.
	Alert *AlertPart `json:"alert,omitempty"`
	// To are the people routes named (e-mail addresses), e-mailed besides
	// the channel's own recipients, or instead of them when PeopleOnly
	// (every route to the channel names people). Never sent to webhooks.
	To         []string `json:"to,omitempty"`
	PeopleOnly bool     `json:"people_only,omitempty"`
}

// Field is one labelled value of a message ("Amount", "$2,400.00").
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// AlertPart is what pagers need of an alert message.
type AlertPart struct {
	DedupKey string     `json:"dedup_key"`
	Status   string     `json:"status"` // firing or resolved
	Severity string     `json:"severity"`
	Kind     string     `json:"kind"`
	Subject  string     `json:"subject"`
	Runbook  string     `json:"runbook,omitempty"` // console path of the runbook
	StartsAt time.Time  `json:"starts_at"`
	EndsAt   *time.Time `json:"ends_at,omitempty"`
}
