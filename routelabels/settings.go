package routelabels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// Settings are the installation's labelling settings.
type Settings struct {
	// SamplePercent of each day's journeys, per skill, are proposed for
	// labelling (at least one per skill).
	SamplePercent int
	// The route_accuracy alert fires when fewer than AlertPercent of the
	// last AlertLastN labelled journeys of an agent were routed right,
	// counted only once AlertLastN labels exist.
	AlertPercent int
	AlertLastN   int
	Custom       bool // set by an admin, not the defaults
}

// DefaultSettings: 5 % of each day's traffic proposed; an alert below
// 80 % over the last 50 labelled journeys.
func DefaultSettings() Settings {
	return Settings{SamplePercent: 5, AlertPercent: 80, AlertLastN: 50}
}

// Validate returns one message per bad field, keyed by form field.
func (s Settings) Validate() map[string]string {
	errs := map[string]string{}
	if s.SamplePercent < 1 || s.SamplePercent > 100 {
		errs["sample_percent"] = "The sample is a whole percentage from 1 to 100."
	}
	if s.AlertPercent < 1 || s.AlertPercent > 100 {
		errs["alert_percent"] = "The accuracy threshold is a whole percentage from 1 to 100."
	}
	if s.AlertLastN < 1 || s.AlertLastN > 10_000 {
		errs["alert_last_n"] = "Count the last 1 to 10000 labelled journeys."
	}
	return errs
}

// GetSettings reads the settings, or the defaults when none were set.
func GetSettings(ctx context.Context, q store.Querier) (Settings, error) {
	s, err := store.Get(ctx, q, func(row store.Scanner) (Settings, error) {
		var s Settings
		err := row.Scan(&s.SamplePercent, &s.AlertPercent, &s.AlertLastN)
		s.Custom = true
		return s, err
	}, `SELECT sample_percent, alert_percent, alert_last_n FROM route_label_settings WHERE id = 1`)
	if errors.Is(err, store.ErrNotFound) {
		return DefaultSettings(), nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("labelling settings: %w", err)
	}
	return s, nil
}

// SetSettings saves s with its audit event "route.label_settings_set"
// (with the values replaced); the same values again change nothing.
func SetSettings(ctx context.Context, db *store.DB, actor audit.Actor, s Settings, now time.Time) (changed bool, err error) {
	if errs := s.Validate(); len(errs) > 0 {
		return false, &store.ValidationError{Fields: errs}
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		prev, err := GetSettings(ctx, tx)
		if err != nil {
			return err
		}
		if prev.SamplePercent == s.SamplePercent && prev.AlertPercent == s.AlertPercent && prev.AlertLastN == s.AlertLastN {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO route_label_settings (id, sample_percent, alert_percent, alert_last_n, changed_by, changed_at)
			VALUES (1, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET sample_percent = excluded.sample_percent, alert_percent = excluded.alert_percent,
				alert_last_n = excluded.alert_last_n, changed_by = excluded.changed_by, changed_at = excluded.changed_at`,
			s.SamplePercent, s.AlertPercent, s.AlertLastN, actor.Type+":"+actor.ID, store.FormatTime(now))
		if err != nil {
			return fmt.Errorf("set labelling settings: %w", err)
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "route.label_settings_set",
			Subject: audit.Subject{Type: "route_label_settings", ID: "installation"},
			Details: map[string]any{"sample_percent": s.SamplePercent, "alert_percent": s.AlertPercent, "alert_last_n": s.AlertLastN,
				"previous_sample_percent": prev.SamplePercent, "previous_alert_percent": prev.AlertPercent,
				"previous_alert_last_n": prev.AlertLastN}})
		return err
	})
	return changed, err
}

// Target is an agent in an environment with labels.
type Target struct{ Agent, Env string }

// Targets lists the agents and environments that have labels.
func Targets(ctx context.Context, q store.Querier) ([]Target, error) {
	out, err := store.Query(ctx, q, func(row store.Scanner) (Target, error) {
		var t Target
		return t, row.Scan(&t.Agent, &t.Env)
	}, `SELECT DISTINCT agent, env FROM route_labels ORDER BY agent, env`)
	if err != nil {
		return nil, fmt.Errorf("labelled agents: %w", err)
	}
	return out, nil
}
