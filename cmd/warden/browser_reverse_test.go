package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserReverseFromTrace: alice approves the $54 refund and Warden
// executes it. carol, on call, then goes from the Traces list to the
// refund's trace, from the trace to its action, and presses Reverse with a
// reason — by clicking only, without typing a URL. The reversal names her
// and shows her reason; the original and the reversal link to each other.
func TestBrowserReverseFromTrace(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "alice")

	// alice approves ORD-1002's refund ($54: one approver).
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/approvals?min=50&max=100"),
		chromedp.WaitVisible(byTestID("approvals-table")),
		chromedp.Click(css(`[data-testid="approvals-table"] a.queue-summary`)),
		chromedp.WaitVisible(byTestID("approve")),
	)
	if err != nil {
		t.Fatalf("open the $54 refund: %v\nwarden logs:\n%s", err, p.logs)
	}
	if s := textOf(t, ctx, byTestID("action-summary")); !strings.Contains(s, "ORD-1002") {
		t.Fatalf("opened %q, want the ORD-1002 refund", s)
	}
	journey := textOf(t, ctx, byTestID("action-journey"))
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("approve")), chromedp.WaitVisible(byTestID("notice"))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	waitActionStatus(t, ctx, p, "executed")

	// carol signs in and finds it by clicking.
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	signIn(t, ctx, p, "carol")
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav a[href="/traces"]`)),
		chromedp.WaitVisible(byTestID("trace-"+journey)),
		chromedp.Click(css(`[data-testid="trace-`+journey+`"] a`)),
		chromedp.WaitVisible(byTestID("trace-action-link")),
	)
	if err != nil {
		t.Fatalf("open the refund's trace from Traces: %v\nwarden logs:\n%s", err, p.logs)
	}
	screenshot(ctx, "reverse-trace")
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("trace-action-link")),
		chromedp.WaitVisible(byTestID("reverse")),
	)
	if err != nil {
		t.Fatalf("open the action from its trace: %v\nwarden logs:\n%s", err, p.logs)
	}
	if h := textOf(t, ctx, byTestID("what-heading")); h != "What happened" {
		t.Errorf("executed action's heading = %q, want What happened", h)
	}
	screenshot(ctx, "reverse-action")
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("reverse")),
		chromedp.WaitVisible(byTestID("confirm-reverse")),
		chromedp.SendKeys(css("#reverse-reason"), "INC-7: the customer kept the t-shirts"),
	)
	if err != nil {
		t.Fatalf("open Reverse: %v", err)
	}
	screenshot(ctx, "reverse-confirm")
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("confirm-reverse")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("request the reversal: %v\nwarden logs:\n%s", err, p.logs)
	}
	screenshot(ctx, "reverse-requested")
	if got := textOf(t, ctx, byTestID("action-reason")); got != "INC-7: the customer kept the t-shirts" {
		t.Errorf("reversal shows reason %q, want carol's", got)
	}
	if got := textOf(t, ctx, byTestID("reason-label")); !strings.Contains(got, "Carol") {
		t.Errorf("reason label = %q, want carol's name, not the agent's", got)
	}
	if got := textOf(t, ctx, byTestID("action-requester")); !strings.Contains(got, "Carol") {
		t.Errorf("requested by = %q, want carol", got)
	}
	// Back to the original: it says the reversal is requested, not done.
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("reverses-link")),
		chromedp.WaitVisible(byTestID("reversed-by")),
	)
	if err != nil {
		t.Fatalf("follow the link to the original: %v", err)
	}
	if got := textOf(t, ctx, byTestID("reversed-by")); !strings.HasPrefix(got, "Reversal requested (Awaiting approval)") {
		t.Errorf("original says %q, want Reversal requested (Awaiting approval)", got)
	}
}
