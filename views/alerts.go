package views

import (
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/runbooks"
)

// AlertSummary is an alert as people work it: why it fired, the runbook
// that fits what failed with the parameters its buttons are filled with,
// who owns it, and links to the failing journeys.
type AlertSummary struct {
	Alert   alerts.Alert
	Cause   alerts.Cause
	Runbook *runbooks.Runbook // nil when no runbook handles it
	Params  map[string]string
	Owner   string
	// JourneysURL lists the journeys of the alert's window (the failed
	// ones when some failed); CodeURLs those of each of Cause.Codes.
	JourneysURL string
	CodeURLs    []string
	// KeyOwners names who created the keys that sent the failures: the
	// agent's owner to contact.
	KeyOwners principals.Names
}

// URL is the alert's page.
func (s AlertSummary) URL() templ.SafeURL { return AlertURL(s.Alert.ID) }

// RunbookURL opens the alert's runbook with the alert, so its buttons are
// filled for it.
func (s AlertSummary) RunbookURL() templ.SafeURL {
	if s.Runbook == nil {
		return ""
	}
	return templ.SafeURL("/runbooks/" + url.PathEscape(s.Runbook.ID) + "?" + url.Values{"alert": {s.Alert.ID}}.Encode())
}

// AlertURL is an alert's page.
func AlertURL(id string) templ.SafeURL { return templ.SafeURL("/alerts/" + url.PathEscape(id)) }

// Headline is the cause in one line: "14 of 22 journeys failed, mostly
// the agent's requests: incomplete_request ×14".
func (s AlertSummary) Headline() string {
	c := s.Cause
	if c.Failures == 0 {
		return ""
	}
	out := strconv.Itoa(c.Failures) + " of " + strconv.Itoa(c.Journeys) + " journeys failed, mostly " + alerts.FaultWords(c.Fault)
	if len(c.Codes) > 0 {
		out += ": " + c.Codes[0].Code + " ×" + strconv.Itoa(c.Codes[0].Count)
	}
	return out
}

// AlertDetailView is one alert's page.
type AlertDetailView struct {
	AlertSummary
	Proposed []ProposedAction // the runbook's buttons, filled for the alert
	CanAck   bool
	Notice   string
	Now      time.Time
}

// ProposedAction is a runbook button as the alert fills it; Missing names
// the parameters the alert could not fill (then it is not offered).
type ProposedAction struct {
	Action  runbooks.Action
	Missing []string
	// Held says why the button waits for a second admin to publish it
	// (runbooks.Held); "" when it may be pressed.
	Held string
}

// faultClass is the badge of whose doing failures are.
func faultClass(fault string) string {
	if fault == alerts.FaultAgent {
		return "badge badge-warn"
	}
	return "badge badge-bad"
}

// AlertsView is the Alerts page: what is firing, what resolved lately,
// and each skill's thresholds (a form per skill for admins).
type AlertsView struct {
	Firing   []AlertSummary
	Resolved []alerts.Alert
	Rules    []AlertRuleRow
	CanEdit  bool // admins change thresholds; on-call reads them
	Notice   string
	// Pending are the threshold changes waiting for a second admin (linked
	// only when CanEdit: the changes pages are admins').
	Pending []changes.Change
}

// AlertRuleRow is one skill's thresholds: the rule in force, and the form
// as typed (with its errors) after a refused save.
type AlertRuleRow struct {
	Rule   alerts.Rule
	Form   AlertRuleForm
	Errors FieldErrors
}

// AlertRuleForm is a skill's thresholds as typed.
type AlertRuleForm struct {
	FailurePercent, P99Ms, WindowMinutes, MinJourneys string
}

// AlertRuleFormOf is the form showing a rule.
func AlertRuleFormOf(r alerts.Rule) AlertRuleForm {
	return AlertRuleForm{
		FailurePercent: strconv.Itoa(r.FailurePercent),
		P99Ms:          strconv.FormatInt(r.P99Latency.Milliseconds(), 10),
		WindowMinutes:  strconv.FormatInt(int64(r.Window/time.Minute), 10),
		MinJourneys:    strconv.Itoa(r.MinJourneys),
	}
}

// alertValue reads "40% (threshold 20%)".
func alertValue(a alerts.Alert) string {
	return strconv.FormatInt(a.Value, 10) + a.Unit() + " (threshold " + strconv.FormatInt(a.Threshold, 10) + a.Unit() + ")"
}

func alertRulePath(skill string) templ.SafeURL { return templ.SafeURL("/alerts/rules/" + skill) }
