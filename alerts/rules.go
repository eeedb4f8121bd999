package alerts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// Rules returns the rules admins set, by skill. A skill missing from the
// map is held to DefaultRule.
func Rules(ctx context.Context, q store.Querier) (map[string]Rule, error) {
	all, err := store.Query(ctx, q, scanRule, `
		SELECT skill, failure_rate_percent, p99_latency_ms, window_minutes, min_journeys FROM alert_rules`)
	if err != nil {
		return nil, fmt.Errorf("alert rules: %w", err)
	}
	out := make(map[string]Rule, len(all))
	for _, r := range all {
		out[r.Skill] = r
	}
	return out, nil
}

// RuleFor returns the skill's rule: the one an admin set, or the default.
func RuleFor(rules map[string]Rule, skill string) Rule {
	if r, ok := rules[skill]; ok {
		return r
	}
	return DefaultRule(skill)
}

type scanner = store.Scanner

func scanRule(s scanner) (Rule, error) {
	var r Rule
	var p99ms, windowMin int64
	if err := s.Scan(&r.Skill, &r.FailurePercent, &p99ms, &windowMin, &r.MinJourneys); err != nil {
		return Rule{}, err
	}
	r.P99Latency = time.Duration(p99ms) * time.Millisecond
	r.Window = time.Duration(windowMin) * time.Minute
	r.Custom = true
	return r, nil
}

// SetRule sets a skill's thresholds and records who did it, with the
// values it replaced, in one transaction: thresholds decide who is paged,
// so changing them is evidence. Saving the rule in force again changes
// and records nothing (changed false). An invalid rule is a
// *store.ValidationError; whether the skill exists is the caller's
// business (skills live in code).
func SetRule(ctx context.Context, db *store.DB, actor audit.Actor, r Rule, now time.Time) (changed bool, err error) {
	if r.Skill == "" {
		return false, errors.New("set alert rule: no skill named")
	}
	if errs := r.Validate(); len(errs) > 0 {
		return false, fmt.Errorf("set alert rule for %s: %w", r.Skill, &store.ValidationError{Fields: errs})
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		rules, err := Rules(ctx, tx)
		if err != nil {
			return err
		}
		prev := RuleFor(rules, r.Skill)
		if prev.FailurePercent == r.FailurePercent && prev.P99Latency == r.P99Latency &&
			prev.Window == r.Window && prev.MinJourneys == r.MinJourneys {
			return nil
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO alert_rules (skill, failure_rate_percent, p99_latency_ms, window_minutes, min_journeys, changed_by, changed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (skill) DO UPDATE SET failure_rate_percent = excluded.failure_rate_percent,
				p99_latency_ms = excluded.p99_latency_ms, window_minutes = excluded.window_minutes,
				min_journeys = excluded.min_journeys, changed_by = excluded.changed_by, changed_at = excluded.changed_at`,
			r.Skill, r.FailurePercent, r.P99Latency.Milliseconds(), int64(r.Window/time.Minute), r.MinJourneys,
			actor.ID, store.FormatTime(now))
		if err != nil {
			return fmt.Errorf("set alert rule for %s: %w", r.Skill, err)
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    "alert.rule_set",
			Subject: audit.Subject{Type: "alert_rule", ID: r.Skill},
			Details: map[string]any{
				"failure_percent": r.FailurePercent, "p99_ms": r.P99Latency.Milliseconds(),
				"window_minutes": int64(r.Window / time.Minute), "min_journeys": r.MinJourneys,
				"previous_failure_percent": prev.FailurePercent, "previous_p99_ms": prev.P99Latency.Milliseconds(),
				"previous_window_minutes": int64(prev.Window / time.Minute), "previous_min_journeys": prev.MinJourneys,
			},
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}
