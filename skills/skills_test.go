package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func testSkill(steps ...Step) Skill {
	return Skill{
		Name:     "test",
		Examples: []string{"do the test thing"},
		Tools:    []string{"a", "b"},
		MaxSteps: 2,
		Plan:     func(Input) ([]Step, error) { return steps, nil },
	}
}

func argsOK([]StepResult) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }

func TestStepsChecksThePlan(t *testing.T) {
	tests := []struct {
		name  string
		skill Skill
		want  string // "" for success
	}{
		{"within limits", testSkill(Step{Tool: "a", Args: argsOK}, Step{Tool: "b", Args: argsOK}), ""},
		{"too many steps", testSkill(Step{Tool: "a", Args: argsOK}, Step{Tool: "b", Args: argsOK}, Step{Tool: "a", Args: argsOK}),
			"plan test: 3 steps exceed the skill's maximum of 2"},
		{"a tool the skill may not use", testSkill(Step{Tool: "issue_refund", Args: argsOK}),
			`plan test: step 1 calls "issue_refund", which the skill may not use`},
		{"no argument builder", testSkill(Step{Tool: "a"}), "plan test: step 1 (a) cannot build its arguments"},
		{"plan fails", func() Skill {
			s := testSkill()
			s.Plan = func(Input) ([]Step, error) { return nil, fmt.Errorf("%w: no order id", ErrIncomplete) }
			return s
		}(), "plan test: request is missing information: no order id"},
		{"invalid skill", func() Skill { s := testSkill(); s.MaxSteps = 0; return s }(), "skill test: max steps must be at least 1"},
	}
	for _, tt := range tests {
		steps, err := tt.skill.Steps(Input{Text: "x"})
		if tt.want == "" {
			if err != nil || len(steps) != 2 {
				t.Errorf("%s: Steps = %d steps, %v, want 2 steps", tt.name, len(steps), err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || steps != nil {
			t.Errorf("%s: Steps = %d steps, %v, want error %q", tt.name, len(steps), err, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Skill)
		want   string
	}{
		{"valid", func(*Skill) {}, ""},
		{"no name", func(s *Skill) { s.Name = "" }, "skill has no name"},
		{"no plan", func(s *Skill) { s.Plan = nil }, "skill test has no plan"},
		{"no tools", func(s *Skill) { s.Tools = nil }, "skill test may use no tool"},
		{"nothing to route by", func(s *Skill) { s.Examples = nil }, "skill test has nothing to route by: add a description or examples"},
	}
	for _, tt := range tests {
		s := testSkill()
		tt.modify(&s)
		err := s.Validate()
		if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
	for _, s := range Demo() {
		if err := s.Validate(); err != nil {
			t.Errorf("demo skill: %v", err)
		}
		if s.MaxSteps != len(s.Tools) {
			t.Errorf("%s: MaxSteps %d, want one step per tool (%d)", s.Name, s.MaxSteps, len(s.Tools))
		}
	}
}

func TestStopIsErrStop(t *testing.T) {
	err := fmt.Errorf("step 3: %w", &Stop{Output: "ORD-1001 can no longer be changed."})
	var stop *Stop
	if !errors.Is(err, ErrStop) || !errors.As(err, &stop) || stop.Output != "ORD-1001 can no longer be changed." {
		t.Errorf("wrapped Stop: Is=%v As=%v", errors.Is(err, ErrStop), errors.As(err, &stop))
	}
	if errors.Is(errors.New("other"), ErrStop) {
		t.Error("a plain error matched ErrStop")
	}
}

func TestSpecJSON(t *testing.T) {
	s := Demo()[0]
	b, err := json.Marshal(s.Spec())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"order_status"`, `"version":"1"`, `"tools":["lookup_order"]`, `"max_steps":1`, `"examples":["where is my order",`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Spec JSON %s lacks %s", b, want)
		}
	}
	// The spec is a copy: changing it leaves the skill alone.
	spec := s.Spec()
	spec.Examples[0], spec.Tools[0] = "changed", "changed"
	if s.Examples[0] == "changed" || s.Tools[0] == "changed" {
		t.Error("Spec shares slices with the skill")
	}
}

func TestGenericSummary(t *testing.T) {
	s := testSkill()
	tests := []struct {
		results []StepResult
		want    string
	}{
		{nil, "Nothing was done."},
		{[]StepResult{{Tool: "a"}}, "Done: called a."},
		{[]StepResult{{Tool: "a"}, {Tool: "b"}}, "Done: 2 tool calls, the last b."},
		{[]StepResult{{Tool: "a"}, {Tool: "b", Pending: true}}, "The b call is awaiting approval."},
	}
	for _, tt := range tests {
		if got := Summarize(s, tt.results); got != tt.want {
			t.Errorf("Summarize(%v) = %q, want %q", tt.results, got, tt.want)
		}
	}
}
