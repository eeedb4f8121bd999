package execution

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/tools"
)

// Replay routes recorded inputs again and dry-runs the plan: reads are
// answered from the recordings, high-impact calls are never proposed, and
// no provider is called and nothing is written.
func TestReplayDryRunsRecordedJourneys(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}
	cand, _, err := releases.Publish(r.ctx, r.db, by, releases.Bundle{Model: "builtin:keyword-router", Prompt: "sha256:p",
		Tools: "sha256:t", Routing: "sha256:r2", Approval: "sha256:a", Skills: "sha256:s"}, nil, "candidate")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.run("Where is my order ORD-1003?"); err != nil {
			t.Fatal(err)
		}
	}
	// Recorded as order_status because the request named it; routed
	// afresh, the text is a refund.
	if _, err := r.svc.Run(r.ctx, journeys.Request{Caller: r.caller, Input: refundRequest, Skill: "order_status", RequestID: "req-2"}); err != nil {
		t.Fatal(err)
	}
	refund := r.pending(refundRequest)
	if err := r.decide(approver, refund.Action.ID, approvals.Reject); err != nil {
		t.Fatal(err)
	}
	actionsBefore := countRows(t, r, "actions")
	stepsBefore := countRows(t, r, "journey_steps")
	eventsBefore := countRows(t, r, "audit_events")
	r.hooks.set(func(ctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		t.Errorf("replay called the provider: %s", call.Tool)
		return tools.Result{}, nil
	})

	rep, err := r.svc.Replay(r.ctx, cand, "order_status", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 || rep.Agreed != 2 || rep.Rate < 0.66 || rep.Rate > 0.67 {
		t.Fatalf("replay = %d rows, %d agreed, rate %.3f; want 3, 2, 2/3", len(rep.Rows), rep.Agreed, rep.Rate)
	}
	dis := rep.Rows[0] // newest first
	if dis.Agree || dis.RecordedSkill != "order_status" || dis.CandidateSkill != "refunds" || dis.CandidateOutcome != journeys.ReplayWouldApprove {
		t.Errorf("the misrouted journey replays as %+v; want refunds, would ask for approval", dis)
	}
	if !slices.Equal(dis.Tools, []string{"lookup_order (recorded)", "issue_refund (not proposed)"}) {
		t.Errorf("the misrouted journey's dry run = %v", dis.Tools)
	}
	for _, row := range rep.Rows[1:] {
		if !row.Agree || row.CandidateOutcome != journeys.ReplayCompleted || row.RecordedOutcome != journeys.StatusCompleted ||
			!slices.Equal(row.Tools, []string{"lookup_order (recorded)"}) {
			t.Errorf("a read replays as %+v; want agreement, completed from the recording", row)
		}
	}
	if rep.RoutingNote == "" {
		t.Error("the report does not say which router routed")
	}

	rf, err := r.svc.Replay(r.ctx, cand, "refunds", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rf.Rows) != 1 || rf.Rows[0].CandidateOutcome != journeys.ReplayWouldApprove || !rf.Rows[0].Agree ||
		rf.Rows[0].RecordedOutcome != journeys.StatusRejected || rf.Rate != 1 {
		t.Errorf("refund replay = %+v, rate %v", rf.Rows, rf.Rate)
	}
	if countRows(t, r, "actions") != actionsBefore || countRows(t, r, "journey_steps") != stepsBefore ||
		countRows(t, r, "audit_events") != eventsBefore {
		t.Error("a replay wrote actions, steps or audit events")
	}

	if _, err := r.svc.Replay(r.ctx, cand, "order_status", 201); err == nil {
		t.Error("replaying 201 journeys was accepted")
	}
	if _, err := r.svc.Replay(r.ctx, "sha256:nope", "order_status", 5); err == nil {
		t.Error("replaying an unpublished candidate was accepted")
	}
}

func countRows(t *testing.T, r *rig, table string) int {
	t.Helper()
	var n int
	if err := r.db.Read().QueryRowContext(r.ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A replay routes under the candidate's own routing policy and skill set,
// so it shows what the candidate would change; the kept replay reads back
// as it was made and its audit event names it.
func TestReplayUsesTheCandidatesRoutingAndIsKept(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}
	contents, err := releases.ContentsOf(map[string]any{
		"routing": releases.RoutingPolicy{Router: "keyword", Threshold: 0.40},
		"skills":  []string{"order_status", "order_support", "customer_email"}, // no refunds
	})
	if err != nil {
		t.Fatal(err)
	}
	b := releases.Bundle{Model: "builtin:keyword-router", Prompt: "sha256:p", Tools: "sha256:t", Approval: "sha256:a"}
	b.Routing, _ = releases.ContentID(contents["routing"])
	b.Skills, _ = releases.ContentID(contents["skills"])
	cand, _, err := releases.Publish(r.ctx, r.db, by, b, contents, "no refunds")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(refundRequest); err != nil {
		t.Fatal(err)
	}
	if err := r.decide(approver, r.pending(otherRefundRequest).Action.ID, approvals.Reject); err != nil {
		t.Fatal(err)
	}
	id, err := r.svc.RecordReplay(r.ctx, by, cand, "refunds", 5)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := releases.GetReplay(r.ctx, r.db.Read(), id)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := journeys.ReplayReportOf(kept)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Replayed != 1 || kept.Agreed != 0 || len(rep.Rows) != 1 || rep.Rows[0].CandidateOutcome != journeys.ReplayNoRoute || rep.Rows[0].Agree {
		t.Fatalf("kept replay = %+v, rows %+v; want the refund unrouted under a release without refunds", kept, rep.Rows)
	}
	if !strings.Contains(rep.RoutingNote, "customer_email") {
		t.Errorf("routing note %q does not name the candidate's skill set", rep.RoutingNote)
	}
	var verb string
	if err := r.db.Read().QueryRowContext(r.ctx, `SELECT verb FROM audit_events WHERE subject_id = ?`, id).Scan(&verb); err != nil || verb != "release.replayed" {
		t.Errorf("replay audit event = %q, %v", verb, err)
	}
	if got, err := releases.ReplaysOf(r.ctx, r.db.Read(), cand, kept.CreatedAt, 5); err != nil || len(got) != 1 || got[0].ID != id {
		t.Errorf("ReplaysOf = %v, %v", got, err)
	}
}
