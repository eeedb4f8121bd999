package alerts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/tenants"
)

// Report is what one evaluation changed.
type Report struct {
	Fired    []Alert
	Resolved []Alert
}

// system is the actor of the events the evaluation writes.
var system = audit.Actor{Type: audit.ActorSystem, ID: "alerts"}

// key identifies a condition: one alert of a kind about a subject.
type key struct{ kind, subject string }

// condition is a rule that holds now, with the value that broke it.
type condition struct {
	value, threshold int64
	tenant           string
}

// Evaluate checks every rule as of now, fires the alerts whose condition
// holds and are not firing yet, and resolves the firing ones whose
// condition cleared, in one transaction with an audit event per change.
// A skill with fewer ended journeys in its window than its rule's minimum
// fires nothing, and resolves what was firing: there is no longer enough
// evidence of a fault. Evaluations (each replica runs its own) queue on
// PostgreSQL, so one sees what the one before it fired or resolved: an
// alert fires once, and resolves once.
func Evaluate(ctx context.Context, db *store.DB, now time.Time) (Report, error) {
	var rep Report
	err := db.Transact(ctx, func(tx *store.Tx) error {
		rep = Report{}
		if err := store.Serialize(ctx, tx, "alerts_evaluate"); err != nil {
			return err
		}
		holds, err := conditions(ctx, tx, now)
		if err != nil {
			return err
		}
		firing, err := list(ctx, tx, `WHERE a.resolved_at IS NULL`, -1)
		if err != nil {
			return err
		}
		open := map[key]bool{}
		for _, a := range firing {
			k := key{a.Kind, a.Subject}
			open[k] = true
			if _, ok := holds[k]; ok {
				continue
			}
			if err := resolve(ctx, tx, &a, now); err != nil {
				return err
			}
			rep.Resolved = append(rep.Resolved, a)
		}
		for _, k := range sortedKeys(holds) {
			if open[k] {
				continue
			}
			c := holds[k]
			a := Alert{ID: store.NewID(), Kind: k.kind, Subject: k.subject, Tenant: c.tenant,
				Value: c.value, Threshold: c.threshold, FiredAt: now.UTC()}
			if err := fire(ctx, tx, a); err != nil {
				return err
			}
			rep.Fired = append(rep.Fired, a)
		}
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("evaluate alerts: %w", err)
	}
	return rep, nil
}

// conditions returns what holds now: per skill, its failure rate and p99
// against its rule; per tenant, its budget's burn; per model deployment,
// its calls that cost more than their reservations.
func conditions(ctx context.Context, q store.Querier, now time.Time) (map[key]condition, error) {
	rules, err := Rules(ctx, q)
	if err != nil {
		return nil, err
	}
	// Rules may differ in window: the stats are read once per window.
	byWindow := map[time.Duration][]journeys.SkillStat{}
	stats := func(w time.Duration) ([]journeys.SkillStat, error) {
		if s, ok := byWindow[w]; ok {
			return s, nil
		}
		s, err := journeys.SkillStats(ctx, q, now.Add(-w))
		byWindow[w] = s
		return s, err
	}
	windows := map[time.Duration]bool{DefaultRule("").Window: true}
	for _, r := range rules {
		windows[r.Window] = true
	}
	out := map[key]condition{}
	for w := range windows {
		ss, err := stats(w)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			r := RuleFor(rules, s.Skill)
			if r.Window != w || s.Journeys < r.MinJourneys {
				continue
			}
			if pct := s.FailurePercent(); pct >= r.FailurePercent {
				out[key{FailureRate, s.Skill}] = condition{value: int64(pct), threshold: int64(r.FailurePercent)}
			}
			if s.P99 >= r.P99Latency {
				out[key{P99Latency, s.Skill}] = condition{value: s.P99.Milliseconds(), threshold: r.P99Latency.Milliseconds()}
			}
		}
	}
	budgets, err := budgets.List(ctx, q, now)
	if err != nil {
		return nil, err
	}
	for _, b := range budgets {
		// A zero limit admits nothing, so nothing can burn it.
		if b.LimitMicros > 0 && b.Alerting() {
			slug, err := tenants.SlugOf(ctx, q, b.TenantID)
			if err != nil {
				return nil, err
			}
			out[key{BudgetBurn, b.TenantID}] = condition{value: int64(b.UsedPercent()), threshold: int64(b.AlertPercent), tenant: slug}
		}
	}
	overruns, err := models.Overruns(ctx, q, now.Add(-OverrunWindow))
	if err != nil {
		return nil, err
	}
	for _, o := range overruns {
		subject := o.Deployment
		if subject == "" {
			subject = "(alias " + o.Alias + ")"
		}
		out[key{ModelOverrun, subject}] = condition{value: int64(o.Calls), threshold: 1}
	}
	if err := routeAccuracy(ctx, q, out); err != nil {
		return nil, err
	}
	return out, nil
}

// routeAccuracy adds, per agent and environment with labels, the
// route_accuracy condition when its last AlertLastN labelled journeys
// were routed right less often than AlertPercent (subject "agent/env").
func routeAccuracy(ctx context.Context, q store.Querier, out map[key]condition) error {
	set, err := routelabels.GetSettings(ctx, q)
	if err != nil {
		return err
	}
	targets, err := routelabels.Targets(ctx, q)
	if err != nil {
		return err
	}
	for _, t := range targets {
		labels, err := routelabels.Of(ctx, q, t.Agent, t.Env, set.AlertLastN)
		if err != nil {
			return err
		}
		if len(labels) < set.AlertLastN {
			continue
		}
		if pct := routelabels.Accuracy(labels).Percent(); pct < set.AlertPercent {
			out[key{RouteAccuracy, t.Agent + "/" + t.Env}] = condition{value: int64(pct), threshold: int64(set.AlertPercent)}
		}
	}
	return nil
}

func fire(ctx context.Context, tx *store.Tx, a Alert) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO alerts (id, kind, subject, value, threshold, fired_at) VALUES (?, ?, ?, ?, ?, ?)`,
		a.ID, a.Kind, a.Subject, a.Value, a.Threshold, store.FormatTime(a.FiredAt))
	if err != nil {
		return fmt.Errorf("fire alert %s %s: %w", a.Kind, a.Subject, err)
	}
	// The event keeps why it fired as well as that it did: the failure
	// codes then, and whose doing they were.
	c, err := CauseOf(ctx, tx, a, nil, a.FiredAt)
	if err != nil {
		return err
	}
	if err := appendEvent(ctx, tx, "alert.fired", a, c); err != nil {
		return err
	}
	return notifyChange(ctx, tx, a)
}

func resolve(ctx context.Context, tx *store.Tx, a *Alert, now time.Time) error {
	t := now.UTC()
	_, err := tx.ExecContext(ctx, `UPDATE alerts SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL`, store.FormatTime(t), a.ID)
	if err != nil {
		return fmt.Errorf("resolve alert %s: %w", a.ID, err)
	}
	a.Resolved = &t
	if err := appendEvent(ctx, tx, "alert.resolved", *a, Cause{}); err != nil {
		return err
	}
	return notifyChange(ctx, tx, *a)
}

func appendEvent(ctx context.Context, tx *store.Tx, verb string, a Alert, c Cause) error {
	details := map[string]any{"kind": a.Kind, "subject": a.Subject, "what": a.What(), "unit": a.Unit(),
		"value": a.Value, "threshold": a.Threshold}
	if len(c.Codes) > 0 {
		var codes []string
		for _, cc := range c.Codes {
			codes = append(codes, fmt.Sprintf("%s %d", cc.Code, cc.Count))
		}
		details["codes"] = strings.Join(codes, ", ")
		details["fault"] = FaultWords(c.Fault)
	}
	_, err := audit.Append(ctx, tx, audit.Event{
		Actor:   system,
		Tenant:  a.Tenant,
		Verb:    verb,
		Subject: audit.Subject{Type: "alert", ID: a.ID},
		Details: details,
	})
	return err
}
