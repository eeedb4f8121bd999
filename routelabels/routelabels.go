// Package routelabels keeps people's judgement of routes: a reviewer
// (on-call or admin) says a journey went to the right skill, or names the
// skill it should have gone to, or says no skill should have taken it.
// From those labels it counts route accuracy — per agent, skill, release
// and week, with a confusion table of what was routed against what was
// expected — proposes a daily sample of journeys to label, and feeds the
// route_accuracy alert and the canary's label gate.
//
// The runtime (journeys.Service.LabelRoute) loads the journey and calls
//
//	changed, err := routelabels.Set(ctx, db, by, routelabels.Journey{...}, routelabels.Verdict{Correct: false, Expected: "refunds"}, known)
//
// which upserts the one row per journey and appends "route.labelled" in
// the same transaction; the latest label counts, earlier ones stay in the
// audit chain. Accuracy is read with Stats, the alert's window with
// Recent, and the day's sample with Sample (a pure function).
package routelabels

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// NoSkill is the form value of "no skill: it should have been refused";
// it is stored as the empty expected skill.
const NoSkill = "-"

// Journey is what a label is about, copied from the journey so accuracy
// is counted from labels alone.
type Journey struct {
	ID         string
	TenantID   string
	TenantSlug string // for the audit event
	Agent, Env string
	Release    string
	Routed     string // the skill it ran under; "" when it was refused
	At         time.Time
}

// Verdict is a reviewer's judgement: Correct, or the skill it should have
// gone to (Expected, "" for none: refuse).
type Verdict struct {
	Correct  bool
	Expected string
}

// Label is a journey's latest label.
type Label struct {
	Journey
	Expected string // equals Routed when Correct
	Correct  bool
	By       string // display name
	LabelAt  time.Time
}

// Who labels: the audit actor and the name people see.
type Who struct {
	Actor audit.Actor
	Name  string
}

// ErrNotLabelled is a journey nobody labelled yet.
var ErrNotLabelled = problem.NotFound("not_labelled", "Nobody has labelled this journey's route yet.")

// ParseVerdict reads the label form: verdict "right" or "wrong", and for
// wrong the expected skill (a name from known, or NoSkill). Anything else
// is a *store.ValidationError naming the field.
func ParseVerdict(verdict, expected, routed string, known []string) (Verdict, error) {
	switch verdict {
	case "right":
		return Verdict{Correct: true, Expected: routed}, nil
	case "wrong":
	default:
		return Verdict{}, &store.ValidationError{Fields: map[string]string{"verdict": "Say whether the route was right or wrong."}}
	}
	expected = strings.TrimSpace(expected)
	switch {
	case expected == "":
		return Verdict{}, &store.ValidationError{Fields: map[string]string{"expected": "Choose the skill it should have gone to, or \"no skill: should have been refused\"."}}
	case expected == NoSkill:
		expected = ""
	case !slices.Contains(known, expected):
		return Verdict{}, &store.ValidationError{Fields: map[string]string{"expected": fmt.Sprintf("%q is not a skill of this agent.", expected)}}
	}
	if expected == routed {
		return Verdict{}, &store.ValidationError{Fields: map[string]string{"expected": "A wrong route should have gone somewhere else than where it went; choose another skill, or say it was right."}}
	}
	return Verdict{Correct: false, Expected: expected}, nil
}

// Set records v as j's label, replacing an earlier one, with its audit
// event "route.labelled" (the previous label in its details) in one
// transaction. Labelling the same again changes and records nothing.
func Set(ctx context.Context, db *store.DB, by Who, j Journey, v Verdict) (changed bool, err error) {
	if v.Correct {
		v.Expected = j.Routed
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		prev, err := Get(ctx, tx, j.ID)
		had := err == nil
		if err != nil && !errors.Is(err, ErrNotLabelled) {
			return err
		}
		if had && prev.Correct == v.Correct && prev.Expected == v.Expected {
			return nil
		}
		now := store.Now()
		_, err = tx.ExecContext(ctx, `INSERT INTO route_labels (journey_id, tenant_id, agent, env, release_digest, routed_skill,
				expected_skill, correct, journey_at, labelled_by, labelled_by_name, labelled_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (journey_id) DO UPDATE SET expected_skill = excluded.expected_skill, correct = excluded.correct,
				labelled_by = excluded.labelled_by, labelled_by_name = excluded.labelled_by_name, labelled_at = excluded.labelled_at`,
			j.ID, j.TenantID, j.Agent, j.Env, j.Release, j.Routed, v.Expected, boolInt(v.Correct),
			store.FormatTime(j.At), by.Actor.Type+":"+by.Actor.ID, by.Name, now)
		if err != nil {
			return fmt.Errorf("label route of %s: %w", j.ID, err)
		}
		changed = true
		details := map[string]any{"verdict": verdictWord(v.Correct), "routed": j.Routed, "expected": v.Expected,
			"release": j.Release, "agent": j.Agent, "env": j.Env}
		if had {
			details["previous_verdict"], details["previous_expected"] = verdictWord(prev.Correct), prev.Expected
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: by.Actor, Tenant: j.TenantSlug, Verb: "route.labelled",
			Subject: audit.Subject{Type: "journey", ID: j.ID}, Details: details})
		return err
	})
	return changed, err
}

func verdictWord(correct bool) string {
	if correct {
		return "right"
	}
	return "wrong"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const selectLabel = `SELECT journey_id, tenant_id, agent, env, release_digest, routed_skill, expected_skill, correct,
	journey_at, labelled_by_name, labelled_at FROM route_labels`

func scanLabel(row store.Scanner) (Label, error) {
	var l Label
	var correct int
	var jat, lat string
	if err := row.Scan(&l.ID, &l.TenantID, &l.Agent, &l.Env, &l.Release, &l.Routed, &l.Expected, &correct, &jat, &l.By, &lat); err != nil {
		return Label{}, err
	}
	l.Correct = correct == 1
	l.At, _ = time.Parse(time.RFC3339Nano, jat)
	l.LabelAt, _ = time.Parse(time.RFC3339Nano, lat)
	return l, nil
}

// Get is journeyID's latest label, or ErrNotLabelled.
func Get(ctx context.Context, q store.Querier, journeyID string) (Label, error) {
	l, err := store.Get(ctx, q, scanLabel, selectLabel+` WHERE journey_id = ?`, journeyID)
	if errors.Is(err, store.ErrNotFound) {
		return Label{}, ErrNotLabelled
	}
	if err != nil {
		return Label{}, fmt.Errorf("label of %s: %w", journeyID, err)
	}
	return l, nil
}

// MaxLabels bounds how many labels one count reads (the newest).
const MaxLabels = 20_000

// Of lists the labels of agent in env, newest labelled first, at most
// limit (MaxLabels when 0 or more).
func Of(ctx context.Context, q store.Querier, agent, env string, limit int) ([]Label, error) {
	if limit <= 0 || limit > MaxLabels {
		limit = MaxLabels
	}
	out, err := store.Query(ctx, q, scanLabel, selectLabel+` WHERE agent = ? AND env = ?
		ORDER BY labelled_at DESC, journey_id DESC LIMIT ?`, agent, env, limit)
	if err != nil {
		return nil, fmt.Errorf("route labels of %s/%s: %w", agent, env, err)
	}
	return out, nil
}

// Labelled says which of ids have a label.
func Labelled(ctx context.Context, q store.Querier, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := store.InChunks(ids, func(in string, args []any) error {
		got, err := store.Strings(ctx, q, `SELECT journey_id FROM route_labels WHERE journey_id IN (`+in+`)`, args...)
		for _, id := range got {
			out[id] = true
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("labelled journeys: %w", err)
	}
	return out, nil
}
