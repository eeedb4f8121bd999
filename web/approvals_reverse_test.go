package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/tools/sim"
)

func TestApprovalReverseExecutedRefund(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	orig := pendingAction(t, in, "ORD-1005")
	p := alice.post("/approvals/"+orig.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", orig.PayloadDigest)), nil)
	if p.Status != http.StatusOK {
		t.Fatalf("approve = %d", p.Status)
	}
	p = waitStatus(t, alice, orig.ID, approvals.StatusExecuted)
	if note := text(p, "reversibility-note"); !strings.Contains(note, "compensatable") || !strings.Contains(note, "reverse_refund") {
		t.Errorf("reversibility note = %q", note)
	}
	href, ok := p.Doc.Find(`[data-testid="reverse"]`).Attr("href")
	if !ok || href != "/approvals/"+orig.ID+"/reverse" {
		t.Fatalf("executed refund offers Reverse at %q (%v)", href, ok)
	}
	confirm := alice.get(href)
	if eff := text(confirm, "confirm-effect"); confirm.Status != http.StatusOK || !strings.Contains(eff, "reverse_refund") || !strings.Contains(eff, "high-impact") {
		t.Errorf("confirm page = %d %q, want what reversing creates", confirm.Status, eff)
	}
	if countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE compensates = ?`, orig.ID) != 0 {
		t.Fatal("opening the confirmation created a reversal")
	}
	if p := alice.post(href, url.Values{}, nil); p.Status != http.StatusForbidden {
		t.Errorf("reverse without CSRF token = %d, want 403", p.Status)
	}

	// A reason is required: without one the confirmation comes back (422)
	// and nothing is requested.
	n := auditCount(t, in.DB)
	p = alice.post(href, alice.withCSRF(url.Values{}), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-reason") == "" || auditCount(t, in.DB) != n ||
		countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE compensates = ?`, orig.ID) != 0 {
		t.Fatalf("reverse without a reason = %d (error %q); want 422 and nothing requested", p.Status, text(p, "error-reason"))
	}
	p = alice.post(href, alice.withCSRF(url.Values{"reason": {"customer returned the goods"}}), nil)
	revID := strings.TrimPrefix(p.URL.Path, "/approvals/")
	if p.Status != http.StatusOK || !strings.HasPrefix(revID, "act_") || revID == orig.ID {
		t.Fatalf("reverse = %d at %s, want the new action's page", p.Status, p.URL)
	}
	rev := getAction(t, in, revID)
	if rev.Tool != sim.ToolReverseRefund || rev.Status != approvals.StatusPending || rev.Compensates != orig.ID ||
		rev.IdempotencyKey != "compensates:"+orig.IdempotencyKey || rev.Impact != "high" {
		t.Errorf("reversal = %s %s compensates %q key %q impact %s", rev.Tool, rev.Status, rev.Compensates, rev.IdempotencyKey, rev.Impact)
	}
	if ev := lastAuditOf(t, in, "action.requested", revID); ev.Details["reason"] != "customer returned the goods" || ev.Actor.Type != "principal" {
		t.Errorf("action.requested of the reversal = %+v, want alice's reason", ev)
	}
	if got := text(p, "action-reason"); got != "customer returned the goods" || text(p, "reason-label") != "Alice Approver's reason" {
		t.Errorf("reversal page shows %q: %q, want Alice's reason", text(p, "reason-label"), got)
	}
	if p.Doc.Find(`[data-testid="action-key"]`).Length() != 0 || !strings.Contains(text(p, "action-requester"), "Alice") {
		t.Errorf("reversal provenance names key %q / requester %q, want alice and no key", text(p, "action-key"), text(p, "action-requester"))
	}
	if !strings.Contains(text(p, "notice"), "Reversal requested") {
		t.Errorf("notice = %q", text(p, "notice"))
	}
	if l, _ := p.Doc.Find(`[data-testid="reverses-link"]`).Attr("href"); l != "/approvals/"+orig.ID {
		t.Errorf("the reversal links to %q, want the original", l)
	}
	if note := text(p, "reversibility-note"); note != "reverse_refund is irreversible: it cannot be undone." {
		t.Errorf("reversal's note = %q", note)
	}
	o := alice.get("/approvals/" + orig.ID)
	if l, _ := o.Doc.Find(`[data-testid="reversed-by-link"]`).Attr("href"); l != "/approvals/"+revID {
		t.Errorf("the original links to %q, want its reversal", l)
	}
	if o.Doc.Find(`[data-testid="reverse"]`).Length() != 0 {
		t.Error("the reversed original still offers Reverse")
	}

	// Pressing it again opens the same reversal.
	again := alice.post(href, alice.withCSRF(url.Values{"reason": {"pressed again"}}), nil)
	if again.URL.Path != "/approvals/"+revID {
		t.Errorf("second reverse landed on %s, want %s", again.URL.Path, revID)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE compensates = ?`, orig.ID); n != 1 {
		t.Errorf("%d reversals, want 1", n)
	}

	// Alice asked for it, so someone else decides it.
	if p.Doc.Find(`[data-testid="approve-form"]`).Length() != 0 || !strings.Contains(text(p, "decide-blocked"), "requested") {
		t.Errorf("alice is offered to approve her own reversal (blocked: %q)", text(p, "decide-blocked"))
	}
	if p := alice.post("/approvals/"+revID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", rev.PayloadDigest)), nil); p.Status != http.StatusForbidden {
		t.Errorf("alice approving her own reversal = %d, want 403", p.Status)
	}
	before, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolReverseRefund)
	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	bob.post("/approvals/"+revID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", rev.PayloadDigest)), nil)
	p = waitStatus(t, bob, revID, approvals.StatusExecuted)
	if n, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolReverseRefund); n != before+1 {
		t.Errorf("reverse_refund effects = %d, want %d", n, before+1)
	}
	if p.Doc.Find(`[data-testid="reverse"]`).Length() != 0 {
		t.Error("an executed irreversible action offers Reverse")
	}
}

func TestApprovalReverseRefusals(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	pending := pendingAction(t, in, "ORD-1002")
	if p := alice.get("/approvals/" + pending.ID); p.Doc.Find(`[data-testid="reverse"]`).Length() != 0 {
		t.Error("a pending action offers Reverse")
	}
	if p := alice.get("/approvals/" + pending.ID + "/reverse"); p.Status != http.StatusConflict || !strings.Contains(p.Body, "this one is awaiting approval") {
		t.Errorf("confirming the reversal of a pending action = %d, want 409 saying it is awaiting approval (in words):\n%s", p.Status, p.Body)
	}
	if p := alice.post("/approvals/"+pending.ID+"/reverse", alice.withCSRF(url.Values{"reason": {"r"}}), nil); p.Status != http.StatusConflict {
		t.Errorf("reversing a pending action = %d, want 409", p.Status)
	}
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	if p := dave.post("/approvals/"+pending.ID+"/reverse", dave.withCSRF(url.Values{"reason": {"r"}}), nil); p.Status != http.StatusForbidden {
		t.Errorf("auditor reversing = %d, want 403", p.Status)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE compensates != ''`); n != 0 {
		t.Errorf("%d reversals created by refused requests", n)
	}
}
