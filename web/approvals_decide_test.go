package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/tools/sim"
)

// digestOnPage is the payload digest the page's decision form carries.
func digestOnPage(t *testing.T, p page, form string) string {
	t.Helper()
	d, ok := p.Doc.Find(`[data-testid="` + form + `"] input[name="digest"]`).Attr("value")
	if !ok || d == "" {
		t.Fatalf("no %s with a digest on the page (status %d)", form, p.Status)
	}
	return d
}

func TestApprovalTwoApproversExecuteOnce(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	desk := pendingAction(t, in, "ORD-1004")
	before, err := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund)
	if err != nil {
		t.Fatal(err)
	}

	p := alice.get("/approvals/" + desk.ID)
	if got := text(p, "action-summary"); got != "Refund $2,400.00 to account ••9182 for order ORD-1004" {
		t.Errorf("summary = %q", got)
	}
	if text(p, "action-approvals") != "0 of 2" || statusOf(p, "action-status") != "pending" {
		t.Errorf("approvals %q, status %q; want 0 of 2, pending", text(p, "action-approvals"), statusOf(p, "action-status"))
	}
	if p.Doc.Find(`[data-testid="approve"]`).Length() != 1 || p.Doc.Find(`[data-testid="reject"]`).Length() != 1 {
		t.Fatal("alice is not offered Approve and Reject")
	}
	form := digestOnPage(t, p, "approve-form")
	if form != desk.PayloadDigest {
		t.Errorf("form digest = %q, want the action's payload digest", form)
	}

	p = alice.post("/approvals/"+desk.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "checked the return slip", form)), nil)
	if p.Status != http.StatusOK || p.URL.Path != "/approvals/"+desk.ID {
		t.Fatalf("approve = %d at %s, want the action page", p.Status, p.URL)
	}
	if text(p, "action-approvals") != "1 of 2" || statusOf(p, "action-status") != "pending" {
		t.Errorf("after alice: approvals %q, status %q; want 1 of 2, pending", text(p, "action-approvals"), statusOf(p, "action-status"))
	}
	if d := text(p, "decision-1"); !strings.Contains(d, "Alice Approver") || !strings.Contains(d, "approved") || !strings.Contains(d, "checked the return slip") {
		t.Errorf("decision row = %q, want alice, approved, her comment", d)
	}
	if p.Doc.Find(`[data-testid="approve-form"]`).Length() != 0 || !strings.Contains(text(p, "decide-blocked"), "already approved") {
		t.Errorf("alice is offered a second approval, or not told why not: %q", text(p, "decide-blocked"))
	}
	if n := text(p, "notice"); !strings.Contains(n, "needs 1 more approval") {
		t.Errorf("notice after the first of two approvals = %q, want how many more are needed", n)
	}
	// The queue marks it for alice instead of offering it again.
	if mark := text(alice.get("/approvals"), "you-approved-"+desk.ID); mark != "you approved · waiting for a second approver" {
		t.Errorf("alice's queue marks the action %q, want you approved · waiting for a second approver", mark)
	}
	// Forcing it anyway is refused and records nothing.
	if p := alice.post("/approvals/"+desk.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", form)), nil); p.Status != http.StatusConflict || statusOf(p, "conflict-status") != "pending" {
		t.Errorf("second approval by alice = %d (status %q), want 409", p.Status, statusOf(p, "conflict-status"))
	}
	if n := decisionCount(t, in, desk.ID); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
	if n, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund); n != before {
		t.Fatalf("refunded after one of two approvals")
	}

	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	if q := bob.get("/approvals"); q.Doc.Find(`[data-testid="you-approved-`+desk.ID+`"]`).Length() != 0 {
		t.Error("bob's queue marks alice's approval as his")
	}
	p = bob.get("/approvals/" + desk.ID)
	p = bob.post("/approvals/"+desk.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", digestOnPage(t, p, "approve-form"))), nil)
	if p.Status != http.StatusOK || p.URL.Path != "/approvals/"+desk.ID {
		t.Fatalf("bob's approval = %d at %s", p.Status, p.URL)
	}
	p = waitStatus(t, bob, desk.ID, approvals.StatusExecuted)
	if r := text(p, "action-receipt"); !strings.Contains(r, `"refund_id": "rf_`) {
		t.Errorf("receipt = %q, want the provider's refund id", r)
	}
	if text(p, "action-approvals") != "2 of 2" || p.Doc.Find(`[data-testid="approve-form"]`).Length() != 0 {
		t.Errorf("executed page: approvals %q, forms still shown %v", text(p, "action-approvals"), p.Doc.Find(`[data-testid="approve-form"]`).Length() != 0)
	}
	if n, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund); n != before+1 {
		t.Errorf("refund effects = %d, want exactly one more than %d", n, before)
	}
	j := callAPI(t, ctx, http.MethodGet, in.URL+"/v1/journeys/"+desk.JourneyID, in.DemoKey, nil, nil)
	if j.Status != http.StatusOK || j.str("status") != "completed" {
		t.Errorf("GET /v1/journeys/%s = %d %s, want completed", desk.JourneyID, j.Status, j.Raw)
	}
	// The queue no longer lists it.
	if ids := queueActionIDs(alice.get("/approvals")); len(ids) != 2 || strings.Contains(strings.Join(ids, ","), desk.ID) {
		t.Errorf("queue after execution = %v", ids)
	}
}

func TestApprovalRejectNeedsReason(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	a := pendingAction(t, in, "ORD-1005")
	digest := digestOnPage(t, alice.get("/approvals/"+a.ID), "reject-form")

	p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Reject, "   ", digest)), nil)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "reason-error"), "A rejection needs a reason") {
		t.Errorf("reject without reason = %d, error %q; want 422 and the message", p.Status, text(p, "reason-error"))
	}
	if statusOf(p, "action-status") != "pending" || p.Doc.Find(`[data-testid="reject-form"]`).Length() != 1 {
		t.Error("the refused rejection does not show the pending action with its forms again")
	}
	if n := decisionCount(t, in, a.ID); n != 0 {
		t.Fatalf("%d decisions recorded for a refused rejection", n)
	}

	p = alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Reject, "the customer was charged once only", digest)), nil)
	if p.Status != http.StatusOK || statusOf(p, "action-status") != "rejected" {
		t.Fatalf("reject with reason = %d, status %q", p.Status, statusOf(p, "action-status"))
	}
	if d := text(p, "decision-1"); !strings.Contains(d, "rejected") || !strings.Contains(d, "charged once only") {
		t.Errorf("decision row = %q", d)
	}
	if getAction(t, in, a.ID).Status != approvals.StatusRejected {
		t.Error("the action is not stored rejected")
	}
	// The decision is made: an approval arriving late shows what happened.
	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	late := bob.post("/approvals/"+a.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", digest)), nil)
	if late.Status != http.StatusConflict || statusOf(late, "conflict-status") != "rejected" {
		t.Errorf("late approval = %d, status shown %q; want 409 and rejected", late.Status, statusOf(late, "conflict-status"))
	}
	if n := decisionCount(t, in, a.ID); n != 1 {
		t.Errorf("%d decisions, want 1", n)
	}
}

func TestApprovalDecisionRefusals(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	a := pendingAction(t, in, "ORD-1002")
	path := "/approvals/" + a.ID + "/decide"

	p := alice.post(path, alice.withCSRF(decideForm(approvals.Approve, "", strings.Repeat("0", 64))), nil)
	if p.Status != http.StatusConflict || !strings.Contains(p.Doc.Find("h1").Text(), "changed since you opened it") ||
		!strings.Contains(text(p, "conflict-message"), "not recorded") {
		t.Errorf("stale digest = %d %q %q", p.Status, p.Doc.Find("h1").Text(), text(p, "conflict-message"))
	}
	if href, _ := p.Doc.Find(`[data-testid="conflict-reload"]`).Attr("href"); href != "/approvals/"+a.ID {
		t.Errorf("reload link = %q", href)
	}
	if p := alice.post(path, decideForm(approvals.Approve, "", a.PayloadDigest), nil); p.Status != http.StatusForbidden {
		t.Errorf("without CSRF token = %d, want 403", p.Status)
	}
	if p := alice.post(path, alice.withCSRF(decideForm("maybe", "", a.PayloadDigest)), nil); p.Status != http.StatusBadRequest {
		t.Errorf("unknown decision = %d, want 400", p.Status)
	}
	if p := alice.post(path, alice.withCSRF(decideForm(approvals.Approve, strings.Repeat("x", 2001), a.PayloadDigest)), nil); p.Status != http.StatusUnprocessableEntity || text(p, "comment-error") == "" {
		t.Errorf("overlong comment = %d %q, want 422 with the field error", p.Status, text(p, "comment-error"))
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if p := carol.post(path, carol.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status != http.StatusForbidden {
		t.Errorf("on-call deciding = %d, want 403", p.Status)
	}
	anon := newBrowser(t, in.URL).noRedirect()
	if p := anon.post(path, url.Values{}, nil); p.Status != http.StatusForbidden && p.Status != http.StatusUnauthorized {
		t.Errorf("anonymous deciding = %d, want 401 or 403", p.Status)
	}
	if n := decisionCount(t, in, a.ID); n != 0 || getAction(t, in, a.ID).Status != approvals.StatusPending {
		t.Errorf("refused decisions recorded %d, status %s", n, getAction(t, in, a.ID).Status)
	}
}

// An approved action that cannot run says so: blocked before anything
// was sent, not "check the provider".
func TestApprovalFailedNeedsReview(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	a := pendingAction(t, in, "ORD-1002")
	// The kill switch goes off between the decision and the execution.
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := catalog.SetEnabled(ctx, tx, sim.ToolIssueRefund, false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil)
	p := waitStatus(t, alice, a.ID, approvals.StatusFailed)
	if f := text(p, "action-failure"); !strings.Contains(f, "Blocked before anything was sent") || !strings.Contains(f, "switched off") ||
		strings.Contains(f, "Check the provider") {
		t.Errorf("failure = %q, want blocked before anything was sent, and why", f)
	}
	if p.Doc.Find(`[data-testid="action-receipt"], [data-testid="reverse"]`).Length() != 0 {
		t.Error("a failed action shows a receipt or offers Reverse")
	}
}
