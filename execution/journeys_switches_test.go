package execution

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tools"
)

// A skill switched off while a journey of it runs: that journey finishes
// (it was routed before the switch), new ones are refused, and switching
// the skill on again routes them as before. Other skills are untouched.
func TestSkillSwitchedOffWhileJourneysRun(t *testing.T) {
	r := newRig(t)
	r.hooks.set(func(_ context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		if call.Tool == "lookup_order" {
			r.hooks.set(nil)
			r.switchSkill("refunds", false)
		}
		return next()
	})
	running := r.pending(refundRequest) // switched off during its first step
	if running.Journey.Skill != "refunds" || running.Action.Tool != "issue_refund" {
		t.Errorf("the running journey = %s with action %s, want refunds awaiting issue_refund", running.Journey.Skill, running.Action.Tool)
	}

	_, err := r.run(refundRequest)
	if p := problemOf(t, "Run(refund) while refunds is off", err); p.Code != journeys.CodeSkillDisabled || p.Status() != 422 {
		t.Fatalf("Run(refund) while refunds is off = %s (%d), want skill_disabled (422)", p.Code, p.Status())
	}
	if out, err := r.run("Where is my order ORD-1003?"); err != nil || out.Journey.Status != journeys.StatusCompleted {
		t.Errorf("order_status while refunds is off = %v, %v; want completed", out.Journey.Status, err)
	}
	// The approval of the journey that was already running still executes.
	if err := r.decide(approver, running.Action.ID, approvals.Approve); err != nil {
		t.Fatal(err)
	}
	if err := r.ex.ExecuteAction(r.ctx, running.Action.ID); err != nil {
		t.Fatal(err)
	}
	if j := r.journey(running.Journey.ID); j.Status != journeys.StatusCompleted {
		t.Errorf("the journey routed before the switch is %s, want completed", j.Status)
	}

	r.switchSkill("refunds", true)
	if out := r.pending(otherRefundRequest); out.Journey.Skill != "refunds" {
		t.Errorf("after switching on, routed to %q, want refunds", out.Journey.Skill)
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Errorf("budget reserved %d, want 0: the refused journey released its reservation", b.ReservedMicros)
	}
}

func TestSwitchSkillOnlyKnowsTheRuntimesSkills(t *testing.T) {
	r := newRig(t)
	_, err := r.svc.SwitchSkill(r.ctx, audit.Actor{Type: audit.ActorPrincipal, ID: oncall.ID}, "weather", false, "no such skill")
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SwitchSkill(weather) = %v, want store.ErrNotFound", err)
	}
}

// The reason typed into a switch goes into the audit chain redacted.
func TestSwitchReasonsAreRedacted(t *testing.T) {
	r := newRig(t)
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: oncall.ID}
	reason := "customer jane.doe@example.com reported double refunds"
	if _, err := r.svc.SwitchTool(r.ctx, actor, "issue_refund", false, reason); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.SwitchSkill(r.ctx, actor, "refunds", false, reason); err != nil {
		t.Fatal(err)
	}
	evs, err := audit.List(r.ctx, r.db.Read(), audit.Filter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		got, _ := ev.Details["reason"].(string)
		if got == "" || strings.Contains(got, "jane.doe") || !strings.Contains(got, "double refunds") {
			t.Errorf("%s reason = %q, want the reason with the address redacted", ev.Verb, got)
		}
	}
}

// Reversing a refund whose compensating tool is switched off is refused
// at once, saying why, and creates nothing; switched on again, the
// reversal is requested as usual.
func TestReverseRefusedWhileTheCompensatingToolIsOff(t *testing.T) {
	r := newRig(t)
	orig := r.executed(refundRequest)
	r.setEnabled("reverse_refund", false)
	_, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
	p := problemOf(t, "Reverse", err)
	if p.Code != policy.CodeDisabled || p.Kind != problem.KindConflict || !strings.Contains(p.Message, "reverse_refund is switched off") {
		t.Errorf("Reverse = %s %q (%v), want 409 tool_disabled naming reverse_refund", p.Code, p.Message, p.Kind)
	}
	if got := r.compensations(orig.ID); len(got) != 0 {
		t.Errorf("%d reversals created, want none", len(got))
	}
	r.setEnabled("reverse_refund", true)
	rev, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
	if err != nil || rev.Status != approvals.StatusPending || rev.Tool != "reverse_refund" {
		t.Errorf("Reverse after switching on = %s %s, %v; want a pending reverse_refund", rev.Tool, rev.Status, err)
	}
}

// A reversal requested while its tool was on, then approved after it was
// switched off, fails safely with the reason: nothing reaches the
// provider, and the refund stays as it was.
func TestReversalWhoseToolIsSwitchedOffAfterApprovalFails(t *testing.T) {
	r := newRig(t)
	orig := r.executed(refundRequest)
	rev, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.decide(approver2, rev.ID, approvals.Approve); err != nil {
		t.Fatal(err)
	}
	r.setEnabled("reverse_refund", false)
	if err := r.ex.ExecuteAction(r.ctx, rev.ID); err != nil {
		t.Fatalf("ExecuteAction = %v", err)
	}
	a := r.action(rev.ID)
	if a.Status != approvals.StatusFailed || a.Failure != "blocked before sending: tool reverse_refund is switched off" {
		t.Errorf("reversal %s (%q), want failed: blocked before sending: tool reverse_refund is switched off", a.Status, a.Failure)
	}
	if n := r.effects("reverse_refund"); n != 0 || len(r.hooks.callsOf("reverse_refund")) != 0 {
		t.Errorf("%d reversals at the provider, want none", n)
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Errorf("budget reserved %d after the failed reversal, want 0", b.ReservedMicros)
	}
}
