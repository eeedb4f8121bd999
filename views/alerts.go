package views

import (
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/alerts"
)

// AlertsView is the Alerts page: what is firing, what resolved lately,
// and each skill's thresholds (a form per skill for admins).
type AlertsView struct {
	Firing   []alerts.Alert
	Resolved []alerts.Alert
	Rules    []AlertRuleRow
	CanEdit  bool // admins change thresholds; on-call reads them
	Notice   string
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
