package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserTake: bob takes the pending $2,400 refund from its page and
// the page says he is reviewing it, with the owners of the runbooks that
// act on its tool; alice sees "Bob Approver is reviewing" in her queue and
// on the page, told that taking is advisory, and still approves it.
func TestBrowserTake(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "bob")
	action := openFirstInQueue(t, ctx, p, "?sort=amount")
	if owner := textOf(t, ctx, byTestID("action-owner")); !strings.Contains(owner, "owner:") || !strings.Contains(owner, "oncall") {
		t.Errorf("owner line = %q, want the runbook owners", owner)
	}
	err := chromedp.Do(ctx,
		chromedp.Click(byTestID("take")),
		chromedp.WaitVisible(byTestID("release")),
	)
	if err != nil {
		t.Fatalf("bob takes the action: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("claim-holder")); !strings.Contains(got, "You are reviewing") {
		t.Errorf("bob's page says %q, want You are reviewing", got)
	}
	screenshot(ctx, "action-taken")
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("bob signs out: %v", err)
	}

	signIn(t, ctx, p, "alice")
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/approvals?sort=amount"), chromedp.WaitVisible(byTestID("approvals-table"))); err != nil {
		t.Fatalf("open the queue: %v\nwarden logs:\n%s", err, p.logs)
	}
	row := textOf(t, ctx, css(`[data-testid="approvals-table"] tbody tr:first-child`))
	if !strings.Contains(row, "Bob Approver is reviewing") {
		t.Errorf("alice's queue row = %q, want Bob Approver is reviewing", row)
	}
	screenshot(ctx, "queue-taken")
	err = chromedp.Do(ctx, chromedp.Navigate(action), chromedp.WaitVisible(byTestID("claim-holder")))
	if err != nil {
		t.Fatalf("alice opens the action: %v", err)
	}
	if got := textOf(t, ctx, byTestID("claim-holder")); !strings.Contains(got, "Bob Approver is reviewing") || !strings.Contains(got, "you may still decide it") {
		t.Errorf("alice's page says %q, want Bob Approver is reviewing and that she may still decide", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("alice approves: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("action-approvals")); got != "1 of 2" {
		t.Errorf("approvals after alice = %q, want 1 of 2", got)
	}
	p.stop(t)
}
