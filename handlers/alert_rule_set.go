package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/app"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/views"
)

// AlertRuleSet sets a skill's alert thresholds: failure rate, p99 latency,
// window and the minimum number of journeys.
func (h *Console) AlertRuleSet(c echo.Context) error {
	// A skill's thresholds alert on every tenant's journeys.
	if err := requireAllTenants(CurrentPrincipal(c), "Changing a skill's alert thresholds"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	skill := c.Param("skill")
	if !slices.ContainsFunc(h.Runtime.Skills(), func(s skills.Spec) bool { return s.Name == skill }) {
		return problem.NotFound("not_found", "There is no skill "+strconv.Quote(skill)+".")
	}
	form := views.AlertRuleForm{
		FailurePercent: c.FormValue("failure_percent"), P99Ms: c.FormValue("p99_ms"),
		WindowMinutes: c.FormValue("window_minutes"), MinJourneys: c.FormValue("min_journeys"),
	}
	rule := alerts.Rule{Skill: skill}
	errs := views.FieldErrors{}
	if n, msg := formInt(form.FailurePercent, "Enter a whole percentage from 1 to 100."); msg != "" {
		errs["failure_percent"] = msg
	} else {
		rule.FailurePercent = n
	}
	// Out-of-range numbers are refused before they become durations, which
	// could overflow.
	if n, msg := formInt(form.P99Ms, "Enter a whole number of milliseconds."); msg != "" {
		errs["p99_ms"] = msg
	} else if n < 1 || n > 3_600_000 {
		errs["p99_ms"] = "The p99 latency is a number of milliseconds from 1 to 3600000."
	} else {
		rule.P99Latency = time.Duration(n) * time.Millisecond
	}
	if n, msg := formInt(form.WindowMinutes, "Enter a whole number of minutes from 1 to 1440."); msg != "" {
		errs["window_minutes"] = msg
	} else if n < 1 || n > 1440 {
		errs["window_minutes"] = "The window is a whole number of minutes from 1 to 1440."
	} else {
		rule.Window = time.Duration(n) * time.Minute
	}
	if n, msg := formInt(form.MinJourneys, "Enter a whole number of journeys."); msg != "" {
		errs["min_journeys"] = msg
	} else {
		rule.MinJourneys = n
	}
	for field, msg := range rule.Validate() {
		if _, seen := errs[field]; !seen {
			errs[field] = msg
		}
	}
	if len(errs) > 0 {
		return h.renderAlerts(c, http.StatusUnprocessableEntity, "", skill, form, errs)
	}
	// Raising a threshold makes the alert fire later or never: a second
	// admin approves it (changes.AlertRule); lowering applies at once.
	user := CurrentPrincipal(c)
	rules, err := alerts.Rules(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	before, after := app.AlertRuleValue(alerts.RuleFor(rules, skill)), app.AlertRuleValue(rule)
	ch, err := h.govern(c, user, changes.Proposal{Kind: changes.AlertRule, Subject: skill,
		Summary: fmt.Sprintf("Change skill %s's alert thresholds from %s to %s", skill, alertThresholds(before), alertThresholds(after)),
		Before:  before, After: after})
	if err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := alerts.SetRule(ctx, h.DB, principalActor(user), rule, time.Now())
	if errs, ok := fieldErrors(err); ok {
		return h.renderAlerts(c, http.StatusUnprocessableEntity, "", skill, form, errs)
	}
	if err != nil {
		return err
	}
	done := "saved"
	if !changed {
		done = "unchanged"
	}
	return seeOther(c, "/alerts?done="+done+"#rules")
}

// alertThresholds is a skill's alert rule as people read it.
func alertThresholds(v changes.AlertRuleValue) string {
	return fmt.Sprintf("failure rate %d%%, p99 %d ms, window %d min, minimum %d journeys", v.FailurePercent, v.P99Ms, v.WindowMinutes, v.MinJourneys)
}
