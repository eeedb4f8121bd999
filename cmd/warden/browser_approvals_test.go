package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/platform/wait"
)

// firstQueueRow is the summary link of the queue's first row.
var firstQueueRow = css(`[data-testid="approvals-table"] tbody tr:first-child a.queue-summary`)

// openFirstInQueue opens the queue with query and clicks its first row;
// it returns the action page's address.
func openFirstInQueue(t *testing.T, ctx context.Context, p *process, query string) string {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/approvals"+query),
		chromedp.WaitVisible(byTestID("approvals-table")),
		chromedp.Click(firstQueueRow),
		chromedp.WaitVisible(byTestID("action-summary")),
	)
	if err != nil {
		t.Fatalf("open the first action of /approvals%s: %v\nwarden logs:\n%s", query, err, p.logs)
	}
	return location(t, ctx)
}

// waitActionStatus reloads the action page until its status is want.
func waitActionStatus(t *testing.T, ctx context.Context, p *process, want string) {
	t.Helper()
	var got string
	if !wait.ForEvery(15*time.Second, 250*time.Millisecond, func() bool {
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(byTestID("action-status"))); err != nil {
			t.Fatalf("reload: %v", err)
		}
		got = statusOf(t, ctx)
		return got == want
	}) {
		t.Fatalf("action status = %q after 15 s, want %q\nwarden logs:\n%s", got, want, p.logs)
	}
}

// TestBrowserApprovalTwoApprovers: alice finds the $2,400 refund in her
// queue and approves it; it needs a second approver, so it waits. Bob signs
// in and approves it; Warden executes it and the page shows the receipt.
func TestBrowserApprovalTwoApprovers(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "alice")

	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/approvals?sort=amount"), chromedp.WaitVisible(byTestID("approvals-table"))); err != nil {
		t.Fatalf("open the queue: %v\nwarden logs:\n%s", err, p.logs)
	}
	if queue := textOf(t, ctx, byTestID("approvals-table")); !strings.Contains(queue, "Refund $2,400.00 to account ••9182") {
		t.Fatalf("queue = %q, want the $2,400.00 refund", queue)
	}
	screenshot(ctx, "approvals-queue")

	action := openFirstInQueue(t, ctx, p, "?sort=amount")
	if s := textOf(t, ctx, byTestID("action-summary")); !strings.HasPrefix(s, "Refund $2,400.00 to account ••9182") {
		t.Fatalf("action summary = %q", s)
	}
	if got := textOf(t, ctx, byTestID("action-approvals")); got != "0 of 2" {
		t.Errorf("approvals before = %q, want 0 of 2", got)
	}
	screenshot(ctx, "approval-action")

	err := chromedp.Do(ctx,
		chromedp.SendKeys(css("#approve-comment"), "return slip checked"),
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("alice approves: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got, status := textOf(t, ctx, byTestID("action-approvals")), statusOf(t, ctx); got != "1 of 2" || status != "pending" {
		t.Errorf("after alice: %q, %q; want 1 of 2, pending", got, status)
	}
	if blocked := textOf(t, ctx, byTestID("decide-blocked")); !strings.Contains(blocked, "already approved") {
		t.Errorf("alice is told %q, want that she already approved", blocked)
	}
	screenshot(ctx, "approval-one-of-two")

	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("alice signs out: %v", err)
	}
	signIn(t, ctx, p, "bob")
	err = chromedp.Do(ctx,
		chromedp.Navigate(action),
		chromedp.WaitVisible(byTestID("approve")),
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("bob approves: %v\nwarden logs:\n%s", err, p.logs)
	}
	waitActionStatus(t, ctx, p, "executed")
	if r := textOf(t, ctx, byTestID("action-receipt-fields")); !strings.Contains(r, "Refund id") || !strings.Contains(r, "$2,400.00") {
		t.Errorf("receipt = %q, want the provider's refund id and the amount as money", r)
	}
	if got := textOf(t, ctx, byTestID("action-approvals")); got != "2 of 2" {
		t.Errorf("approvals after = %q, want 2 of 2", got)
	}
	screenshot(ctx, "approval-executed")
	p.stop(t)
}

// TestBrowserApprovalReject: a rejection without a reason is refused with
// a message next to the field; with a reason it is recorded.
func TestBrowserApprovalReject(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "bob")
	openFirstInQueue(t, ctx, p, "?max=50") // the $45.50 refund
	if s := textOf(t, ctx, byTestID("action-summary")); !strings.Contains(s, "$45.50") {
		t.Fatalf("opened %q, want the $45.50 refund", s)
	}

	if err := chromedp.Do(ctx, chromedp.Click(byTestID("reject")), chromedp.WaitVisible(byTestID("reason-error"))); err != nil {
		t.Fatalf("reject without a reason: %v\nwarden logs:\n%s", err, p.logs)
	}
	if msg := textOf(t, ctx, byTestID("reason-error")); !strings.Contains(msg, "A rejection needs a reason") {
		t.Errorf("field error = %q", msg)
	}
	if status := statusOf(t, ctx); status != "pending" {
		t.Errorf("status after the refused rejection = %q, want pending", status)
	}
	screenshot(ctx, "approval-reject-needs-reason")

	err := chromedp.Do(ctx,
		chromedp.SendKeys(css("#reject-comment"), "the customer was charged once only"),
		chromedp.Click(byTestID("reject")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("reject with a reason: %v\nwarden logs:\n%s", err, p.logs)
	}
	if status := statusOf(t, ctx); status != "rejected" {
		t.Errorf("status = %q, want rejected", status)
	}
	if d := textOf(t, ctx, byTestID("decision-1")); !strings.Contains(d, "charged once only") {
		t.Errorf("decision = %q, want the reason", d)
	}
	screenshot(ctx, "approval-rejected")
	p.stop(t)
}

// TestBrowserApprovalQueueRefreshes: the queue updates itself (queue.js,
// under the console's script policy) when another approver decides.
func TestBrowserApprovalQueueRefreshes(t *testing.T) {
	aliceCtx := newBrowserContext(t)
	bobCtx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, aliceCtx, p, "alice")
	signIn(t, bobCtx, p, "bob")

	if err := chromedp.Do(aliceCtx, chromedp.Navigate(p.URL+"/approvals?max=50"), chromedp.WaitVisible(byTestID("approvals-table"))); err != nil {
		t.Fatalf("alice opens the queue: %v", err)
	}
	if q := textOf(t, aliceCtx, byTestID("approvals-table")); !strings.Contains(q, "$45.50") {
		t.Fatalf("alice's queue = %q, want the $45.50 refund", q)
	}
	openFirstInQueue(t, bobCtx, p, "?max=50")
	if err := chromedp.Do(bobCtx, chromedp.Click(byTestID("approve")), chromedp.WaitVisible(byTestID("notice"))); err != nil {
		t.Fatalf("bob approves: %v", err)
	}
	// Without reloading, alice's queue empties within a few refreshes.
	waitCtx, cancel := context.WithTimeout(aliceCtx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(waitCtx, chromedp.WaitVisible(byTestID("approvals-empty"))); err != nil {
		t.Fatalf("alice's queue never refreshed: %v\nwarden logs:\n%s", err, p.logs)
	}
	screenshot(aliceCtx, "approvals-queue-refreshed")
	p.stop(t)
}

// statusOf is the status the action page's badge stands for (its
// data-status; the badge says it in words).
func statusOf(t *testing.T, ctx context.Context) string {
	t.Helper()
	r, err := chromedp.Run(ctx, chromedp.AttributeValue(byTestID("action-status"), "data-status", chromedp.NodeVisible))
	if err != nil {
		t.Fatalf("status badge: %v", err)
	}
	return r.Value
}
