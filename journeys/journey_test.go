package journeys

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tools"
)

// Unit prices of the simulator's tools by impact class (sim.Catalog).
const (
	lowMicros    = 1_000
	mediumMicros = 5_000
	highMicros   = 20_000
)

// Low and medium impact calls run through the provider; the journey is
// charged what it used and the rest of its reservation is released.
func TestRunCompletes(t *testing.T) {
	tests := []struct {
		name       string
		input      string
		skill      string
		steps      []string
		output     *regexp.Regexp
		toolUnits  int64
		toolMicros int64
		changes    int // change requests the shop received
	}{
		{
			name:      "a read",
			input:     "Where is my order ORD-1003?",
			skill:     "order_status",
			steps:     []string{"route ok", "tool lookup_order ok"},
			output:    regexp.MustCompile(`^Order ORD-1003 is shipped\.$`),
			toolUnits: 1, toolMicros: lowMicros,
		},
		{
			name:      "reads then an internal write",
			input:     "Please change the delivery address for ORD-1001 to 22 Quay Street, Bristol BS1 4QA",
			skill:     "order_support",
			steps:     []string{"route ok", "tool lookup_order ok", "tool check_change_window ok", "tool submit_change_request ok"},
			output:    regexp.MustCompile(`^Change request chg_\w+ submitted for ORD-1001\.$`),
			toolUnits: 3, toolMicros: 2*lowMicros + mediumMicros, changes: 1,
		},
		{
			name:      "the plan stops before the write",
			input:     "Please change the delivery address for ORD-1003 to 22 Quay Street, Bristol BS1 4QA",
			skill:     "order_support",
			steps:     []string{"route ok", "tool lookup_order ok", "tool check_change_window ok"},
			output:    regexp.MustCompile(`^ORD-1003 can no longer be changed: .*\. No change was requested\.$`),
			toolUnits: 2, toolMicros: 2 * lowMicros,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			out, err := r.run(tt.input)
			if err != nil {
				t.Fatalf("Run(%q) = %v", tt.input, err)
			}
			if out.Journey.Status != StatusCompleted || out.Action != nil {
				t.Errorf("Run = %s with action %v, want completed with none", out.Journey.Status, out.Action)
			}
			j := r.journey(out.Journey.ID)
			if j.Status != StatusCompleted || j.ErrorCode != "" || j.FinishedAt == nil {
				t.Errorf("stored journey %s (error %q, finished %v), want completed and finished", j.Status, j.ErrorCode, j.FinishedAt)
			}
			if j.Skill != tt.skill {
				t.Errorf("skill = %q, want %q", j.Skill, tt.skill)
			}
			if got := stepsOf(j); !slices.Equal(got, tt.steps) {
				t.Errorf("journal = %q, want %q", got, tt.steps)
			}
			if !tt.output.MatchString(j.Output) || j.Output != out.Journey.Output {
				t.Errorf("output stored %q, answered %q; want both to match %s", j.Output, out.Journey.Output, tt.output)
			}
			if j.KeyID != r.caller.Key.ID || j.TenantID != r.tenant.ID || j.Release != DefaultRelease || j.RequestID != "req-1" {
				t.Errorf("journey of key %s tenant %s release %s request %s, want key %s tenant %s release %s request req-1",
					j.KeyID, j.TenantID, j.Release, j.RequestID, r.caller.Key.ID, r.tenant.ID, DefaultRelease)
			}
			if j.Cost.InputTokens != tokens(tt.input) || j.Cost.OutputTokens != tokens(out.Journey.Output) || j.Cost.ToolUnits != tt.toolUnits {
				t.Errorf("cost %+v, want %d input tokens, %d output tokens, %d tool units", j.Cost, tokens(tt.input), tokens(out.Journey.Output), tt.toolUnits)
			}
			if want := tt.toolMicros + j.Cost.InputTokens*2 + j.Cost.OutputTokens*8; j.Cost.TotalMicros != want {
				t.Errorf("total cost %d, want %d (tools %d and tokens at the default prices)", j.Cost.TotalMicros, want, tt.toolMicros)
			}
			if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != j.Cost.TotalMicros {
				t.Errorf("budget reserved %d spent %d, want the reservation settled: reserved 0, spent %d", b.ReservedMicros, b.SpentMicros, j.Cost.TotalMicros)
			}
			if got := r.effects("submit_change_request"); got != tt.changes {
				t.Errorf("the shop received %d change requests, want %d", got, tt.changes)
			}
		})
	}
}

// A high-impact call is not made: the journey stops awaiting approval,
// with a pending action bound to that call.
func TestRunStopsAtAHighImpactCall(t *testing.T) {
	r := newRig(t)
	out, err := r.run(refundRequest)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	j := r.journey(out.Journey.ID)
	if j.Status != StatusAwaitingApproval || out.Journey.Status != StatusAwaitingApproval || j.FinishedAt != nil {
		t.Errorf("journey answered %s, stored %s (finished %v); want awaiting_approval, not finished", out.Journey.Status, j.Status, j.FinishedAt)
	}
	if want := []string{"route ok", "tool lookup_order ok", "approval issue_refund awaiting_approval"}; !slices.Equal(stepsOf(j), want) {
		t.Errorf("journal = %q, want %q", stepsOf(j), want)
	}
	if want := "Refund of $45.50 to account ••7819 is awaiting approval."; j.Output != want {
		t.Errorf("output = %q, want %q", j.Output, want)
	}
	if out.Action == nil {
		t.Fatal("no action in the outcome")
	}
	a := r.action(out.Action.ID)
	if byJourney, err := approvals.ByJourney(r.ctx, r.db.Read(), j.ID); err != nil || byJourney.ID != a.ID {
		t.Errorf("approvals.ByJourney = %s, %v; want %s", byJourney.ID, err, a.ID)
	}
	if field(t, []byte(j.Steps[2].Result), "action") != a.ID {
		t.Errorf("approval step result %s, want it to name action %s", j.Steps[2].Result, a.ID)
	}
	for _, c := range []struct{ name, got, want string }{
		{"status", a.Status, approvals.StatusPending},
		{"tool", a.Tool, "issue_refund"},
		{"journey", a.JourneyID, j.ID},
		{"key", a.KeyID, r.caller.Key.ID},
		{"key owner", a.KeyOwner, agentOwner},
		{"summary", a.Summary, "Refund $45.50 to account ••7819 for order ORD-1005"},
		{"currency", a.Currency, "USD"},
		{"impact", string(a.Impact), string(risk.ImpactHigh)},
		{"reversibility", string(a.Reversibility), string(risk.Compensatable)},
		{"rule", a.PolicyRule, policy.RuleHighImpact},
		{"target", a.TargetLabel, "ORD-1005"},
	} {
		if c.got != c.want {
			t.Errorf("action %s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if a.StepN != 3 || a.AmountMinor == nil || *a.AmountMinor != 4550 || a.ApprovalsRequired != 1 || !a.ExpiresAt.Equal(r.clock().Add(24*time.Hour)) {
		t.Errorf("action step %d amount %v approvals %d expires %v, want step 3, 4550, 1 approval, expiring %v",
			a.StepN, a.AmountMinor, a.ApprovalsRequired, a.ExpiresAt, r.clock().Add(24*time.Hour))
	}
	if n := len(r.hooks.callsOf("issue_refund")); n != 0 || r.effects("issue_refund") != 0 {
		t.Errorf("the provider was asked to refund %d times (%d effects), want never before approval", n, r.effects("issue_refund"))
	}
	// The journey's own reservation is settled now; the refund's cost is
	// reserved when it is approved.
	if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != j.Cost.TotalMicros || j.Cost.ToolUnits != 1 {
		t.Errorf("budget reserved %d spent %d (journey cost %d, %d units), want reserved 0, spent the journey's cost for 1 unit",
			b.ReservedMicros, b.SpentMicros, j.Cost.TotalMicros, j.Cost.ToolUnits)
	}
}

// Refusals and failures after admission: the journey is recorded as it
// ended, what ran is charged, the rest of its reservation released, and
// no action is created.
func TestRunRefusals(t *testing.T) {
	transient := &tools.Error{Kind: tools.Transient, Reason: "payments system unavailable"}
	tests := []struct {
		name      string
		scopes    []string // nil: every demo scope
		setup     func(r *rig, cancel context.CancelFunc)
		input     string
		hint      string // the request's explicit skill
		code      string
		kind      problem.Kind
		message   string // part of what the caller is told
		status    string
		skill     string
		steps     []string
		toolUnits int64  // units charged
		attempts  int    // calls of lookup_order that reached the provider
		violation string // the policy.violation audited, if any
	}{
		{
			name: "no skill matches", input: "what's the weather like in Paris today",
			code: CodeNoRoute, kind: problem.KindUnprocessable, message: "No skill matches", status: StatusFailed,
			steps: []string{"route failed"},
		},
		{
			name: "the request names an unknown skill", input: "Where is my order ORD-1003?", hint: "weather",
			code: CodeNoRoute, kind: problem.KindUnprocessable, message: "No skill matches", status: StatusFailed,
			steps: []string{"route failed"},
		},
		{
			name: "the request lacks an order", input: "Where is my order?",
			code: CodeIncomplete, kind: problem.KindUnprocessable, message: "name the order", status: StatusFailed,
			skill: "order_status", steps: []string{"route ok"},
		},
		{
			name: "skill not in the key's scopes", scopes: []string{"skill:refunds", "tool:lookup_order"}, input: "Where is my order ORD-1003?",
			code: CodeSkillNotScoped, kind: problem.KindForbidden, message: `do not include skill "order_status"`, status: StatusFailed,
			skill: "order_status", steps: []string{"route ok"}, violation: CodeSkillNotScoped,
		},
		{
			name: "tool not in the key's scopes", scopes: []string{"skill:order_status"}, input: "Where is my order ORD-1003?",
			code: policy.CodeNotInScope, kind: problem.KindForbidden, message: `do not include tool "lookup_order"`, status: StatusFailed,
			skill: "order_status", steps: []string{"route ok", "tool lookup_order refused"}, violation: policy.CodeNotInScope,
		},
		{
			name: "tool switched off", setup: func(r *rig, _ context.CancelFunc) { r.setEnabled("lookup_order", false) },
			input: "Where is my order ORD-1003?",
			code:  policy.CodeDisabled, kind: problem.KindForbidden, message: `Tool "lookup_order" is switched off.`, status: StatusFailed,
			skill: "order_status", steps: []string{"route ok", "tool lookup_order refused"}, violation: policy.CodeDisabled,
		},
		{
			name: "high-impact tool switched off", setup: func(r *rig, _ context.CancelFunc) { r.setEnabled("issue_refund", false) },
			input: refundRequest,
			code:  policy.CodeDisabled, kind: problem.KindForbidden, message: `Tool "issue_refund" is switched off.`, status: StatusFailed,
			skill: "refunds", steps: []string{"route ok", "tool lookup_order ok", "tool issue_refund refused"},
			toolUnits: 1, attempts: 1, violation: policy.CodeDisabled,
		},
		{
			name: "skill switched off", setup: func(r *rig, _ context.CancelFunc) { r.switchSkill("refunds", false) },
			input: refundRequest,
			code:  CodeSkillDisabled, kind: problem.KindUnprocessable, message: `Skill "refunds" is switched off`, status: StatusFailed,
			skill: "refunds", steps: []string{"route refused"}, violation: CodeSkillDisabled,
		},
		{
			name: "the request names a switched-off skill", setup: func(r *rig, _ context.CancelFunc) { r.switchSkill("refunds", false) },
			input: "Where is my order ORD-1003?", hint: "refunds",
			code: CodeSkillDisabled, kind: problem.KindUnprocessable, message: `Skill "refunds" is switched off`, status: StatusFailed,
			skill: "refunds", steps: []string{"route refused"}, violation: CodeSkillDisabled,
		},
		{
			// On-call switches the change tool off while the journey is
			// checking the change window: the steps that ran stay
			// recorded and charged, the next call is refused.
			name: "tool switched off between two steps",
			setup: func(r *rig, _ context.CancelFunc) {
				r.hooks.set(func(_ context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
					if call.Tool == "check_change_window" {
						r.setEnabled("submit_change_request", false)
					}
					return next()
				})
			},
			input: "Please change the delivery address for ORD-1001 to 22 Quay Street, Bristol BS1 4QA",
			code:  policy.CodeDisabled, kind: problem.KindForbidden, message: `Tool "submit_change_request" is switched off.`, status: StatusFailed,
			skill: "order_support", steps: []string{"route ok", "tool lookup_order ok", "tool check_change_window ok", "tool submit_change_request refused"},
			toolUnits: 2, attempts: 1, violation: policy.CodeDisabled,
		},
		{
			name: "provider fails on every attempt", setup: func(r *rig, _ context.CancelFunc) { r.hooks.set(failing("lookup_order", transient)) },
			input: "Where is my order ORD-1003?",
			code:  CodeToolUnavailable, kind: problem.KindUnavailable, message: "payments system unavailable", status: StatusFailed,
			skill: "order_status", steps: []string{"route ok", "tool lookup_order failed"}, attempts: 3,
		},
		{
			name: "provider refuses the call", input: "Where is my order ORD-9999?",
			code: CodeToolRefused, kind: problem.KindUnprocessable, message: "unknown order ORD-9999", status: StatusFailed,
			skill: "order_status", steps: []string{"route ok", "tool lookup_order failed"}, attempts: 1,
		},
		{
			name: "client goes away between steps",
			setup: func(r *rig, cancel context.CancelFunc) {
				r.hooks.set(func(_ context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
					res, err := next()
					cancel()
					return res, err
				})
			},
			input: refundRequest,
			code:  CodeCancelled, kind: problem.KindUnavailable, message: "client went away", status: StatusCancelled,
			skill: "refunds", steps: []string{"route ok", "tool lookup_order ok"}, toolUnits: 1, attempts: 1,
		},
		{
			name: "client goes away during a call",
			setup: func(r *rig, cancel context.CancelFunc) {
				r.hooks.set(func(ctx context.Context, call tools.Call, _ func() (tools.Result, error)) (tools.Result, error) {
					cancel()
					return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "call abandoned", Err: ctx.Err()}
				})
			},
			input: refundRequest,
			code:  CodeCancelled, kind: problem.KindUnavailable, message: "client went away", status: StatusCancelled,
			skill: "refunds", steps: []string{"route ok", "tool lookup_order failed"}, attempts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if tt.scopes != nil {
				r.caller = r.newCaller(r.tenant, tt.scopes...)
			}
			ctx, cancel := context.WithCancel(r.ctx)
			defer cancel()
			if tt.setup != nil {
				tt.setup(r, cancel)
			}
			_, err := r.svc.Run(ctx, Request{Caller: r.caller, Input: tt.input, Skill: tt.hint, RequestID: "req-1"})
			var je *JourneyError
			if !errors.As(err, &je) {
				t.Fatalf("Run = %v, want a *JourneyError", err)
			}
			p := je.Problem
			if p.Code != tt.code || p.Kind != tt.kind {
				t.Errorf("Run = %s (kind %d), want %s (kind %d)", p.Code, p.Kind, tt.code, tt.kind)
			}
			if !strings.Contains(p.Message, tt.message) {
				t.Errorf("message %q, want it to say %q", p.Message, tt.message)
			}
			if (p.RetryAfter > 0) != (tt.kind == problem.KindUnavailable) {
				t.Errorf("RetryAfter = %v, want one only when the caller may retry", p.RetryAfter)
			}
			j := r.journey(je.Journey.ID)
			if j.Status != tt.status || j.ErrorCode != tt.code || j.FinishedAt == nil {
				t.Errorf("stored journey %s (error %q, finished %v), want %s (%s), finished", j.Status, j.ErrorCode, j.FinishedAt, tt.status, tt.code)
			}
			if j.Skill != tt.skill {
				t.Errorf("skill = %q, want %q", j.Skill, tt.skill)
			}
			if got := stepsOf(je.Journey); !slices.Equal(got, tt.steps) {
				t.Errorf("journal answered = %q, want %q", got, tt.steps)
			}
			// The stored journal of a cancelled journey is pinned by
			// TestRunStoresTheJournalOfACancelledJourney (a known bug).
			if got := stepsOf(j); tt.status != StatusCancelled && !slices.Equal(got, tt.steps) {
				t.Errorf("journal stored = %q, want %q", got, tt.steps)
			}
			if j.Cost.ToolUnits != tt.toolUnits || j.Cost.OutputTokens != 0 {
				t.Errorf("cost %+v, want %d tool units and no output", j.Cost, tt.toolUnits)
			}
			if want := tt.toolUnits*lowMicros + j.Cost.InputTokens*2; j.Cost.TotalMicros != want {
				t.Errorf("total cost %d, want %d (what ran: its input and %d tool units)", j.Cost.TotalMicros, want, tt.toolUnits)
			}
			if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != j.Cost.TotalMicros {
				t.Errorf("budget reserved %d spent %d, want reserved 0 (released), spent %d", b.ReservedMicros, b.SpentMicros, j.Cost.TotalMicros)
			}
			if got := len(r.hooks.callsOf("lookup_order")); got != tt.attempts {
				t.Errorf("lookup_order reached the provider %d times, want %d", got, tt.attempts)
			}
			if _, err := approvals.ByJourney(r.ctx, r.db.Read(), j.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("approvals.ByJourney = %v, want no action (store.ErrNotFound)", err)
			}
			if got := violations(t, r, j.ID); !slices.Equal(got, nonEmpty(tt.violation)) {
				t.Errorf("audited violations %q, want %q", got, nonEmpty(tt.violation))
			}
		})
	}
}

// The trace of a journey whose client went away shows the calls that
// ran, as the journey's cost charges them.
func TestRunStoresTheJournalOfACancelledJourney(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	r.hooks.set(func(_ context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		res, err := next()
		cancel()
		return res, err
	})
	_, err := r.svc.Run(ctx, Request{Caller: r.caller, Input: refundRequest})
	var je *JourneyError
	if !errors.As(err, &je) || je.Problem.Code != CodeCancelled {
		t.Fatalf("Run = %v, want a cancelled journey", err)
	}
	j := r.journey(je.Journey.ID)
	if want := []string{"route ok", "tool lookup_order ok"}; !slices.Equal(stepsOf(j), want) || j.Cost.ToolUnits != 1 {
		t.Errorf("stored journal %q charging %d tool units, want %q charging 1", stepsOf(j), j.Cost.ToolUnits, want)
	}
}

// Refusals before admission record nothing and reserve nothing.
func TestRunAdmissionRefusals(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(r *rig)
		input   string
		code    string
		kind    problem.Kind
		message string
	}{
		{"empty input", nil, "", CodeInvalidInput, problem.KindInvalid, "input must be 1 to 16384 bytes"},
		{"input too long", nil, strings.Repeat("a", 16<<10+1), CodeInvalidInput, problem.KindInvalid, "input must be 1 to 16384 bytes"},
		{
			"budget cannot cover the estimate",
			func(r *rig) {
				err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
					return budgets.Set(r.ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Total, LimitMicros: 1000, AlertPercent: 80}, r.clock())
				})
				if err != nil {
					r.t.Fatal(err)
				}
			},
			"Where is my order ORD-1003?", admission.CodeBudgetExhausted, problem.KindExhausted, "budget cannot cover",
		},
		{
			"tenant without a budget",
			func(r *rig) { r.caller = r.newCaller(r.newTenant("globex"), allScopes...) },
			"Where is my order ORD-1003?", admission.CodeBudgetExhausted, problem.KindExhausted, "admin must set one",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if tt.setup != nil {
				tt.setup(r)
			}
			out, err := r.run(tt.input)
			var je *JourneyError
			if errors.As(err, &je) {
				t.Fatalf("Run = %v, a recorded journey; want a refusal before admission", err)
			}
			p := problemOf(t, "Run", err)
			if p.Code != tt.code || p.Kind != tt.kind || !strings.Contains(p.Message, tt.message) {
				t.Errorf("Run = %s (kind %d) %q, want %s (kind %d) saying %q", p.Code, p.Kind, p.Message, tt.code, tt.kind, tt.message)
			}
			if out.Journey.ID != "" || len(r.journeys()) != 0 {
				t.Errorf("Run answered journey %q and stored %d, want none", out.Journey.ID, len(r.journeys()))
			}
			if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != 0 {
				t.Errorf("budget reserved %d spent %d, want untouched", b.ReservedMicros, b.SpentMicros)
			}
			if n := len(r.hooks.callsOf("lookup_order")); n != 0 {
				t.Errorf("the provider was called %d times, want never", n)
			}
		})
	}
}

// violations lists the codes of the policy violations audited for a
// journey.
func violations(t *testing.T, r *rig, journeyID string) []string {
	t.Helper()
	evs, err := audit.List(r.ctx, r.db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Verb == "policy.violation" && ev.Subject.ID == journeyID {
			code, _ := ev.Details["code"].(string)
			out = append(out, code)
		}
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
