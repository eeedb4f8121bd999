// Package skills holds Warden's skills: routed units of behaviour that turn
// a journey's free-text input into a small, deterministic plan of tool
// calls. Everything here is local and deterministic — no network, no
// model — so the same input under the same release always routes to the
// same skill and builds the same arguments.
//
// Each skill is a SKILL.md file (skillmd.go, docs/skills.md): front matter
// with its description, routing examples, tool allow-list, max steps and
// optional model alias, then markdown instructions. The built-in skills
// are embedded; a skill directory adds more or replaces one by name. Their
// Go plans are bound by name; the file's SHA-256 is the skill's Hash,
// which the release records (Router.Entries):
//
//	loaded, problems := skills.Load(dir)   // dir "" for the built-ins only
//	for _, err := range problems { log.Warn("skill skipped", "error", err) } // named, with the reason
//	router, err := skills.NewRouter(loaded, skills.DefaultThreshold)
//
// A Router picks the skill for an input by lexical similarity to each
// skill's description and example phrasings (see router.go). Extract finds
// the values a plan needs in the text: order ids, amounts, e-mail
// addresses, the requested change, the reason. A skill's Plan turns an
// Input into Steps; each Step builds its tool arguments from the results of
// the steps before it, and may end the plan early with a *Stop.
//
// # Driving a skill
//
// The runtime drives a journey like this (policy, approvals, the effect
// ledger and the step journal sit around the tool call; they are not this
// package's business):
//
//	skill, score, err := router.Route(in.Text, requestedSkill) // ErrNoRoute, ErrUnknownSkill → 422
//	// check the key's scopes allow skill.Name → 403
//	steps, err := skill.Steps(in)      // ErrIncomplete → 422; checks MaxSteps and skill.Tools
//	var results []skills.StepResult   // replayed from the journal when resuming
//	for i, st := range steps {
//		if i >= skill.MaxSteps { fail }             // defensive: Steps already checked
//		if i < len(results) { continue }            // recorded: replay, do not re-execute
//		args, err := st.Args(results)
//		var stop *skills.Stop
//		if errors.As(err, &stop) { output = stop.Output; stopped = true; break } // completed
//		if err != nil { failed }
//		// policy check of st.Tool and args; st.Reason is the agent's stated reason
//		// high impact: create the action, then
//		//     output = skills.Summarize(skill, append(results, skills.StepResult{Tool: st.Tool, Args: args, Pending: true}))
//		//     status awaiting_approval; resume here once the action has executed
//		out, err := call(st.Tool, args)
//		results = append(results, skills.StepResult{Tool: st.Tool, Args: args, Output: out})
//		// journal the result
//	}
//	if !stopped { output = skills.Summarize(skill, results) } // completed
//
// Plan is a pure function of Input, so re-planning a resumed journey from
// the same Input yields the same steps, and Summarize reads only the step
// results (arguments and outputs), never the input, so it can run after an
// approval without the original text. In the demo skills the high-impact
// step is always the last one.
package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Errors a caller maps to responses.
var (
	// ErrNoRoute: nothing matches the input well enough (HTTP 422).
	ErrNoRoute = errors.New("no skill matches the request")
	// ErrUnknownSkill: the request named a skill that does not exist
	// (HTTP 422). It is distinct from ErrNoRoute so the message can say so.
	ErrUnknownSkill = errors.New("unknown skill")
	// ErrIncomplete: the input lacks a value the skill needs, such as an
	// order id; nothing was called (HTTP 422).
	ErrIncomplete = errors.New("request is missing information")
	// ErrStop is matched by every *Stop (errors.Is(err, ErrStop)).
	ErrStop = errors.New("plan stopped")
)

// Input is what a journey was asked to do.
type Input struct {
	Text string
	// Metadata carries structured hints from the request. The demo skills
	// read "order_id" when the text names no order.
	Metadata map[string]string
}

// Skill is a routed unit of behaviour.
type Skill struct {
	Name        string
	Version     string // bump when Plan or Summary changes behaviour; part of Spec
	Description string
	Examples    []string // phrasings the router learns from
	Tools       []string // the tools the skill may call, in order of use
	MaxSteps    int      // upper bound on tool calls in one journey
	// Model is the alias of the model that drives the skill; empty for a
	// skill driven by its Go plan alone. A skill with a model and no Go
	// plan is model-driven (journeys/model.go): Plan is nil. A
	// built-in plan of the same name takes precedence over the model.
	Model string
	// Owner is who answers for the skill: a person's e-mail or
	// group:NAME, from its SKILL.md (owner:). HighRisk (high_risk: true)
	// makes a release that changes the skill need its owner's approval
	// (docs/changes.md).
	Owner    string
	HighRisk bool
	// Instructions are the markdown body of the skill's SKILL.md.
	Instructions string
	// Source is where the skill was read: SourceBuiltin, SourceDevDemo or
	// a file path.
	Source string
	// Hash is the hex SHA-256 of the skill's SKILL.md, part of the
	// release a journey runs under; empty for a skill built in code.
	Hash string
	// File is the SKILL.md as read, whose SHA-256 is Hash; empty for a
	// skill built in code. Warden keeps it (releases.KeepSkillFiles) so a
	// rollback shows what changed in the file.
	File string

	// Plan turns an input into steps. It must be deterministic in Input
	// and must not call anything: arguments that depend on earlier results
	// are built later, by Step.Args.
	Plan func(in Input) ([]Step, error)

	// Summary writes the journey's output from its step results. nil uses
	// a generic sentence.
	Summary func(results []StepResult) string
}

// Step is one planned tool call.
type Step struct {
	Tool string
	// Args builds the call's JSON arguments from the results of the steps
	// that ran before it (in order). It returns a *Stop to end the plan
	// early with an explanation for the customer, and any other error when
	// the results make the call impossible (the journey fails).
	Args func(prev []StepResult) (json.RawMessage, error)
	// Reason is the agent's stated reason for the call, one sentence; it
	// is shown to approvers.
	Reason string
}

// StepResult is one executed (or approval-pending) tool call.
type StepResult struct {
	Tool   string
	Args   json.RawMessage
	Output json.RawMessage
	// Pending marks a call that has not run because it awaits approval;
	// Output is empty. Only the last result of a journey can be pending.
	Pending bool
}

// Stop ends a plan early. Output explains why, in words for the customer
// ("ORD-1001 can no longer be changed: ..."); the journey completes with
// it as its output, and no further tool is called.
type Stop struct{ Output string }

func (s *Stop) Error() string { return "plan stopped: " + s.Output }

// Is makes errors.Is(err, ErrStop) true for every *Stop.
func (s *Stop) Is(target error) bool { return target == ErrStop }

// Validate checks a skill definition.
func (s Skill) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("skill has no name")
	case s.Plan == nil && s.Source == "":
		return fmt.Errorf("skill %s has no plan", s.Name)
	case s.Plan == nil && s.Model == "":
		return fmt.Errorf("skill %s has no plan, so it is not runnable yet: it names no model, and Warden has no built-in plan called %s", s.Name, s.Name)
	case s.MaxSteps < 1:
		return fmt.Errorf("skill %s: max steps must be at least 1", s.Name)
	case len(s.Tools) == 0:
		return fmt.Errorf("skill %s may use no tool", s.Name)
	case len(s.Examples) == 0 && s.Description == "":
		return fmt.Errorf("skill %s has nothing to route by: add a description or examples", s.Name)
	}
	return nil
}

// Steps plans in and checks the plan against the skill's own limits: at
// most MaxSteps steps, each calling one of Tools and able to build its
// arguments. Callers use it rather than calling Plan directly.
func (s Skill) Steps(in Input) ([]Step, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Plan == nil {
		return nil, fmt.Errorf("skill %s is driven by model %s: it has no plan to step through", s.Name, s.Model)
	}
	steps, err := s.Plan(in)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", s.Name, err)
	}
	if len(steps) > s.MaxSteps {
		return nil, fmt.Errorf("plan %s: %d steps exceed the skill's maximum of %d", s.Name, len(steps), s.MaxSteps)
	}
	for i, st := range steps {
		if !slices.Contains(s.Tools, st.Tool) {
			return nil, fmt.Errorf("plan %s: step %d calls %q, which the skill may not use", s.Name, i+1, st.Tool)
		}
		if st.Args == nil {
			return nil, fmt.Errorf("plan %s: step %d (%s) cannot build its arguments", s.Name, i+1, st.Tool)
		}
	}
	return steps, nil
}

// Spec is the part of a skill that goes into a release bundle: what
// routing and policy see. Its JSON is stable.
type Spec struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Examples    []string `json:"examples"`
	Tools       []string `json:"tools"`
	MaxSteps    int      `json:"max_steps"`
	Model       string   `json:"model,omitempty"`
	Hash        string   `json:"hash,omitempty"` // SHA-256 of the SKILL.md

	// For the console only.
	Source       string `json:"-"`
	Instructions string `json:"-"`
	Owner        string `json:"-"`
}

// Spec returns the skill's release-bundle description.
func (s Skill) Spec() Spec {
	return Spec{
		Name:        s.Name,
		Version:     s.Version,
		Description: s.Description,
		Examples:    slices.Clone(s.Examples),
		Tools:       slices.Clone(s.Tools),
		MaxSteps:    s.MaxSteps,
		Model:       s.Model,
		Hash:        s.Hash,

		Source:       s.Source,
		Instructions: s.Instructions,
		Owner:        s.Owner,
	}
}

// Summarize writes a journey's output text from its step results. The last
// result may be Pending (awaiting approval).
func Summarize(s Skill, results []StepResult) string {
	if s.Summary != nil {
		return s.Summary(results)
	}
	return genericSummary(results)
}

func genericSummary(results []StepResult) string {
	if len(results) == 0 {
		return "Nothing was done."
	}
	last := results[len(results)-1]
	if last.Pending {
		return fmt.Sprintf("The %s call is awaiting approval.", last.Tool)
	}
	if len(results) == 1 {
		return fmt.Sprintf("Done: called %s.", last.Tool)
	}
	return fmt.Sprintf("Done: %d tool calls, the last %s.", len(results), last.Tool)
}
