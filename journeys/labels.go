package journeys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
)

// Route labels (routelabels): people say whether the runtime routed a
// journey right. The runtime knows whose journeys they are (its agent and
// environment) and which skills it has, so labelling goes through it.

// LabelRoute records a reviewer's label of j's route: verdict "right" or
// "wrong", and for wrong the skill it should have gone to (one of the
// runtime's skills, or routelabels.NoSkill). The caller has checked that
// the reviewer may see j's tenant. A bad verdict is a
// *store.ValidationError and changes nothing.
func (s *Service) LabelRoute(ctx context.Context, by routelabels.Who, j Journey, verdict, expected string) (bool, error) {
	if j.Status == StatusRunning || j.Status == StatusAwaitingApproval {
		return false, &store.ValidationError{Fields: map[string]string{"verdict": "Label a journey once it has ended."}}
	}
	v, err := routelabels.ParseVerdict(verdict, expected, j.Skill, s.o.Router.Names())
	if err != nil {
		return false, err
	}
	return routelabels.Set(ctx, s.o.DB, by, s.labelSubject(j), v)
}

func (s *Service) labelSubject(j Journey) routelabels.Journey {
	return routelabels.Journey{ID: j.ID, TenantID: j.TenantID, TenantSlug: j.TenantSlug, Agent: s.o.Agent, Env: s.o.Env,
		Release: j.Release, Routed: j.Skill, At: j.CreatedAt}
}

// Target is the agent and environment whose journeys this runtime runs.
func (s *Service) Target() (agent, env string) { return s.o.Agent, s.o.Env }

// MaxDayTraffic bounds how many journeys of one day the labelling sample
// reads.
const MaxDayTraffic = 100_000

// QueueItem is a journey proposed for labelling.
type QueueItem struct {
	ID         string
	TenantSlug string
	Skill      string // "" when it was refused
	Status     string
	CreatedAt  time.Time
}

// LabelQueue is the day's sample of ended journeys (settings'
// SamplePercent per skill, routelabels.Sample) that nobody has labelled
// yet, in the tenants inScope accepts, oldest first; Sampled and Done
// count the whole sample.
type LabelQueue struct {
	Day           time.Time
	Items         []QueueItem
	Sampled, Done int
	Percent       int
}

// LabelQueueOf builds day's labelling queue (day is truncated to its UTC
// date).
func LabelQueueOf(ctx context.Context, q store.Querier, day time.Time, percent int, inScope func(slug string) bool) (LabelQueue, error) {
	day = day.UTC().Truncate(24 * time.Hour)
	lq := LabelQueue{Day: day, Percent: percent}
	rows, err := store.Query(ctx, q, func(row store.Scanner) (QueueItem, error) {
		var it QueueItem
		var at string
		err := row.Scan(&it.ID, &it.TenantSlug, &it.Skill, &it.Status, &at)
		it.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
		return it, err
	}, `SELECT j.id, t.slug, j.skill, j.status, j.created_at FROM journeys j JOIN tenants t ON t.id = j.tenant_id
		WHERE j.created_at >= ? AND j.created_at < ? AND j.status NOT IN (?, ?)
		ORDER BY j.created_at, j.id LIMIT ?`,
		store.FormatTime(day), store.FormatTime(day.Add(24*time.Hour)), StatusRunning, StatusAwaitingApproval, MaxDayTraffic)
	if err != nil {
		return LabelQueue{}, fmt.Errorf("journeys of %s: %w", day.Format(time.DateOnly), err)
	}
	byID := map[string]QueueItem{}
	var traffic []routelabels.Routed
	for _, it := range rows {
		if inScope != nil && !inScope(it.TenantSlug) {
			continue
		}
		byID[it.ID] = it
		traffic = append(traffic, routelabels.Routed{ID: it.ID, Skill: it.Skill})
	}
	sample := routelabels.Sample(traffic, percent)
	ids := make([]string, len(sample))
	for i, r := range sample {
		ids[i] = r.ID
	}
	done, err := routelabels.Labelled(ctx, q, ids)
	if err != nil {
		return LabelQueue{}, err
	}
	lq.Sampled, lq.Done = len(sample), len(done)
	for _, id := range ids {
		if !done[id] {
			lq.Items = append(lq.Items, byID[id])
		}
	}
	return lq, nil
}

// ExportRow is one labelled journey in the export: its redacted input,
// the route and the label, and the release digest it ran under.
type ExportRow struct {
	Journey    string    `json:"journey"`
	Tenant     string    `json:"tenant"`
	Agent      string    `json:"agent"`
	Env        string    `json:"env"`
	Release    string    `json:"release"`
	At         time.Time `json:"at"`
	Input      string    `json:"input"` // redacted
	Routed     string    `json:"routed_skill"`
	Verdict    string    `json:"verdict"`        // "right" or "wrong"
	Expected   string    `json:"expected_skill"` // "" when it should have been refused
	LabelledAt time.Time `json:"labelled_at"`
}

// ExportLabels writes agent's labelled journeys in env as JSON lines,
// newest label first, for offline evaluation: the input as the journal
// keeps it (redacted when it was written), redacted again with the
// current rules, never the reviewer's identity. It returns the rows written.
func (s *Service) ExportLabels(ctx context.Context, w io.Writer, agent, env string, inScope func(slug string) bool) (int, error) {
	return ExportLabels(ctx, s.o.DB.Read(), s.o.Redactor, w, agent, env, inScope)
}

// ExportLabels is Service.ExportLabels for a caller without a runtime
// (warden labels export): red redacts the inputs again (nil keeps them as
// the journal has them, redacted when written); inScope nil exports every
// tenant's.
func ExportLabels(ctx context.Context, q store.Querier, red *redact.Redactor, w io.Writer, agent, env string, inScope func(slug string) bool) (int, error) {
	labels, err := routelabels.Of(ctx, q, agent, env, 0)
	if err != nil {
		return 0, err
	}
	enc := json.NewEncoder(w)
	n := 0
	for _, l := range labels {
		j, err := GetJourney(ctx, q, l.ID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		if inScope != nil && !inScope(j.TenantSlug) {
			continue
		}
		verdict := "wrong"
		if l.Correct {
			verdict = "right"
		}
		row := ExportRow{Journey: l.ID, Tenant: j.TenantSlug, Agent: l.Agent, Env: l.Env, Release: l.Release, At: l.At.UTC(),
			Input: j.Input, Routed: l.Routed, Verdict: verdict, Expected: l.Expected, LabelledAt: l.LabelAt.UTC()}
		if red != nil {
			row.Input = red.String(row.Input)
		}
		if err := enc.Encode(row); err != nil {
			return n, fmt.Errorf("export labels: %w", err)
		}
		n++
	}
	return n, nil
}

// LabelledReplay is how a candidate and the active release route the
// labelled journeys: how many each routes to the skill people said was
// right (refusing one that should have been refused counts as right).
type LabelledReplay struct {
	Active         string // the release active when the replay ran
	Labelled       int
	CandidateRight int
	ActiveRight    int
	Rows           []LabelledRow // where the two differ, or the candidate is wrong
}

// LabelledRow is one labelled journey the candidate routes wrong or
// differently from the active release.
type LabelledRow struct {
	JourneyID      string
	Expected       string
	CandidateSkill string
	ActiveSkill    string
}

// replayLabelled routes the newest MaxReplay labelled journeys of the
// runtime's agent under candidate and under the active release.
func (s *Service) replayLabelled(ctx context.Context, candidate string) (LabelledReplay, error) {
	var out LabelledReplay
	p, err := releases.Active(ctx, s.o.DB.Read(), s.o.Agent, s.o.Env)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return out, err
	default:
		out.Active = p.Digest
	}
	labels, err := routelabels.Of(ctx, s.o.DB.Read(), s.o.Agent, s.o.Env, MaxReplay)
	if err != nil {
		return out, err
	}
	routeOf := func(digest, input string) string {
		sk, _, err := s.route(ctx, digest, input, "")
		if err != nil {
			return ""
		}
		return sk.Name
	}
	for _, l := range labels {
		j, err := GetJourney(ctx, s.o.DB.Read(), l.ID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return out, err
		}
		out.Labelled++
		cand := routeOf(candidate, j.Input)
		act := l.Routed // no active release: what ran is the baseline
		if out.Active != "" {
			act = routeOf(out.Active, j.Input)
		}
		if cand == l.Expected {
			out.CandidateRight++
		}
		if act == l.Expected {
			out.ActiveRight++
		}
		if cand != l.Expected || cand != act {
			out.Rows = append(out.Rows, LabelledRow{JourneyID: l.ID, Expected: l.Expected, CandidateSkill: cand, ActiveSkill: act})
		}
	}
	return out, nil
}
