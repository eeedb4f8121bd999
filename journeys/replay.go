package journeys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/skills"
)

// MaxReplay bounds how many recorded journeys one replay reads.
const MaxReplay = 200

// Replay outcomes of the candidate's dry run.
const (
	ReplayCompleted     = "completed"
	ReplayStopped       = "stopped"                // the plan ended early with an answer
	ReplayWouldApprove  = "would ask for approval" // a high-impact tool: never proposed
	ReplayNoRecording   = "no recording"           // a call the recorded journey did not make
	ReplayNoRoute       = "no route"               // no skill matches the input
	ReplayIncomplete    = "incomplete"             // the plan cannot be built from the input
	ReplayRefusedByPlan = "refused by the skill"   // the skill cannot build a step's arguments
	// ReplayModelDriven: the candidate's skill is driven by a model, which
	// a replay never calls (replays are free and deterministic).
	ReplayModelDriven = "model-driven: not replayed"
)

// ReplayRow is one recorded journey and what the candidate would do with
// its (redacted) input.
type ReplayRow struct {
	JourneyID        string
	RecordedRelease  string
	RecordedSkill    string
	RecordedOutcome  string // the journey's status, and its error code if any
	CandidateSkill   string // "" when no skill matches
	CandidateOutcome string
	Tools            []string // the candidate's dry-run calls, in order ("tool (answer)")
	Agree            bool     // the same skill
}

// ReplayReport is a dry run of a candidate release over recorded journeys.
type ReplayReport struct {
	Candidate string
	Skill     string
	N         int
	Rows      []ReplayRow
	Agreed    int
	// Rate is the route agreement rate, Agreed/len(Rows) (0 with no rows).
	Rate float64
	// RoutingNote says what routed: the candidate's routing policy and
	// skill set where Warden holds them, or the built-in ones.
	RoutingNote string
	// Labels is accuracy against people's labels: the candidate and the
	// active release each route the newest labelled journeys.
	Labels LabelledReplay
}

// Replay dry-runs candidate over the last n ended journeys of skill (at
// most MaxReplay): each redacted input is routed under the candidate's
// routing policy and skill set and planned again, every low and medium
// impact call is answered from the recorded journey's step with the same
// tool and the same redacted arguments ("no recording" otherwise), and a
// high-impact call is never proposed: the dry run stops there with "would
// ask for approval". Nothing is called or written.
func (s *Service) Replay(ctx context.Context, candidate, skill string, n int) (ReplayReport, error) {
	if n < 1 || n > MaxReplay {
		return ReplayReport{}, &store.ValidationError{Fields: map[string]string{"n": fmt.Sprintf("Replay 1 to %d journeys.", MaxReplay)}}
	}
	if skill == "" {
		return ReplayReport{}, &store.ValidationError{Fields: map[string]string{"skill": "Choose the skill whose journeys to replay."}}
	}
	if _, err := releases.Get(ctx, s.o.DB.Read(), candidate); err != nil {
		return ReplayReport{}, err
	}
	b, err := s.behaviour(ctx, candidate)
	if err != nil {
		return ReplayReport{}, err
	}
	rep := ReplayReport{Candidate: candidate, Skill: skill, N: n, RoutingNote: routingNote(b)}
	ids, err := lastEnded(ctx, s.o.DB.Read(), skill, n)
	if err != nil {
		return ReplayReport{}, err
	}
	for _, id := range ids {
		j, err := GetJourney(ctx, s.o.DB.Read(), id)
		if err != nil {
			return ReplayReport{}, err
		}
		row := s.replayOne(ctx, candidate, j)
		if row.Agree {
			rep.Agreed++
		}
		rep.Rows = append(rep.Rows, row)
	}
	if len(rep.Rows) > 0 {
		rep.Rate = float64(rep.Agreed) / float64(len(rep.Rows))
	}
	if rep.Labels, err = s.replayLabelled(ctx, candidate); err != nil {
		return ReplayReport{}, err
	}
	return rep, nil
}

// routingNote says what a replay routed under.
func routingNote(b releases.Behaviour) string {
	threshold := "the built-in threshold"
	if b.Threshold > 0 {
		threshold = "threshold " + strconv.FormatFloat(b.Threshold, 'f', -1, 64)
	}
	set := "every built-in skill"
	if b.Skills != nil {
		set = "its skill set (" + strings.Join(b.Skills, ", ") + ")"
	}
	return "Routed under the candidate's routing policy (" + threshold + ") and " + set + "."
}

// RecordReplay runs Replay and keeps its report (releases.SaveReplay,
// audited as "release.replayed") for agent in env; it returns the kept
// replay's id.
func (s *Service) RecordReplay(ctx context.Context, by releases.Author, candidate, skill string, n int) (string, error) {
	rep, err := s.Replay(ctx, candidate, skill, n)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		return "", fmt.Errorf("replay report: %w", err)
	}
	return releases.SaveReplay(ctx, s.o.DB, by, releases.Replay{
		Agent: s.o.Agent, Env: s.o.Env, Candidate: candidate, Skill: skill,
		Requested: n, Replayed: len(rep.Rows), Agreed: rep.Agreed, Report: raw,
		Active: rep.Labels.Active, Labelled: rep.Labels.Labelled, LabelledRight: rep.Labels.CandidateRight,
		ActiveRight: rep.Labels.ActiveRight,
	})
}

// ReplayReportOf decodes a kept replay's report.
func ReplayReportOf(r releases.Replay) (ReplayReport, error) {
	var rep ReplayReport
	if err := json.Unmarshal(r.Report, &rep); err != nil {
		return ReplayReport{}, fmt.Errorf("replay %s: %w", r.ID, err)
	}
	return rep, nil
}

// lastEnded are the ids of skill's newest ended journeys.
func lastEnded(ctx context.Context, q store.Querier, skill string, n int) ([]string, error) {
	out, err := store.Strings(ctx, q, `SELECT id FROM journeys WHERE skill = ? AND status NOT IN (?, ?)
		ORDER BY id DESC LIMIT ?`, skill, StatusRunning, StatusAwaitingApproval, n)
	if err != nil {
		return nil, fmt.Errorf("journeys to replay: %w", err)
	}
	return out, nil
}

func (s *Service) replayOne(ctx context.Context, candidate string, j Journey) ReplayRow {
	row := ReplayRow{JourneyID: j.ID, RecordedRelease: j.Release, RecordedSkill: j.Skill, RecordedOutcome: j.Status}
	if j.ErrorCode != "" {
		row.RecordedOutcome += " (" + j.ErrorCode + ")"
	}
	sk, _, err := s.route(ctx, candidate, j.Input, "")
	if err != nil {
		row.CandidateOutcome = ReplayNoRoute
		return row
	}
	row.CandidateSkill = sk.Name
	row.Agree = sk.Name == j.Skill
	if sk.Model != "" && sk.Plan == nil {
		row.CandidateOutcome = ReplayModelDriven
		return row
	}
	plan, err := sk.Steps(skills.Input{Text: j.Input})
	if err != nil {
		row.CandidateOutcome = ReplayIncomplete
		return row
	}
	used := make([]bool, len(j.Steps))
	var results []skills.StepResult
	for i, st := range plan {
		if i >= sk.MaxSteps {
			break
		}
		args, err := st.Args(results)
		var stop *skills.Stop
		if errors.As(err, &stop) {
			row.CandidateOutcome = ReplayStopped
			return row
		}
		if err != nil {
			row.CandidateOutcome = ReplayRefusedByPlan
			return row
		}
		t, err := catalog.Get(ctx, s.o.DB.Read(), st.Tool)
		if err == nil && t.Impact == risk.ImpactHigh {
			row.Tools = append(row.Tools, st.Tool+" (not proposed)")
			row.CandidateOutcome = ReplayWouldApprove
			return row
		}
		red := s.redactArgs(t, args)
		out, ok := recorded(j.Steps, used, st.Tool, red)
		if !ok {
			row.Tools = append(row.Tools, st.Tool+" (no recording)")
			row.CandidateOutcome = ReplayNoRecording
			return row
		}
		row.Tools = append(row.Tools, st.Tool+" (recorded)")
		results = append(results, skills.StepResult{Tool: st.Tool, Args: args, Output: out})
	}
	row.CandidateOutcome = ReplayCompleted
	return row
}

// recorded finds the first unused successful tool step of the recorded
// journey with the same tool and redacted arguments, and answers its
// (redacted) result.
func recorded(steps []Step, used []bool, tool, args string) (json.RawMessage, bool) {
	for i, st := range steps {
		if used[i] || st.Kind != "tool" || st.Status != "ok" || st.Tool != tool || !sameJSON(st.Arguments, args) {
			continue
		}
		used[i] = true
		return json.RawMessage(st.Result), true
	}
	return nil, false
}

func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return string(ca) == string(cb)
}
