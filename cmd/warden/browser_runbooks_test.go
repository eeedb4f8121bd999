package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRunbookRollback: carol (on-call) opens "Bad release: roll
// back" from Runbooks in the navigation, presses its rollback button, sees
// from which release to which and the diff, and confirms with a reason.
// The result page shows the outcome; Releases shows the earlier release
// active; and erin (admin) finds carol's runbook action in the audit trail
// through the result page's link.
func TestBrowserRunbookRollback(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "carol")

	err := chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/runbooks"]`)),
		chromedp.WaitVisible(byTestID("runbooks")),
		chromedp.Click(css(`[data-testid="runbook-bad-release-rollback"] a`)),
		chromedp.WaitVisible(byTestID("runbook-doc")),
	)
	if err != nil {
		t.Fatalf("open the runbook from the navigation: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("runbook-title")); got != "Bad release: roll back" {
		t.Errorf("runbook title = %q", got)
	}
	screenshot(ctx, "runbook")
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("action-rollback")),
		chromedp.WaitVisible(byTestID("runbook-submit")),
	)
	if err != nil {
		t.Fatalf("press the rollback action: %v", err)
	}
	from, to := textOf(t, ctx, byTestID("rollback-from")), textOf(t, ctx, byTestID("rollback-to"))
	if !strings.HasPrefix(from, "sha256:") || !strings.HasPrefix(to, "sha256:") || from == to {
		t.Fatalf("confirmation rolls from %q to %q, want two different releases", from, to)
	}
	if got := textOf(t, ctx, byTestID("diff-changed")); got != "Changed: prompt, routing and skills." {
		t.Errorf("confirmation diff = %q, want prompt, routing and skills", got)
	}
	screenshot(ctx, "runbook-confirm")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(byTestID("runbook-reason"), "refunds misrouted since the release"),
		chromedp.Click(byTestID("runbook-submit")),
		chromedp.WaitVisible(byTestID("runbook-result")),
	)
	if err != nil {
		t.Fatalf("confirm: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("run-status")); got != "Done" {
		t.Errorf("run status = %q (%s), want done", got, textOf(t, ctx, byTestID("run-outcome")))
	}
	// On-call may not open the audit trail: the run's event is shown on
	// the result page, and no link leads to a page that would be 403.
	if got := textOf(t, ctx, byTestID("run-event-sentence")); !strings.Contains(got, "Roll back to the previous release") || !strings.Contains(got, "refunds misrouted since the release") {
		t.Errorf("the run's event on the result page = %q, want the rollback with its reason", got)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="run-audit"]').length`))
	if err != nil || links != 0 {
		t.Errorf("on-call is shown %d links to the audit trail (%v), want none", links, err)
	}
	auditLink := "/audit?verb=runbook.action"
	screenshot(ctx, "runbook-result")

	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/releases"]`)),
		chromedp.WaitVisible(byTestID("active-digest")),
	)
	if err != nil {
		t.Fatalf("open Releases: %v", err)
	}
	if got := textOf(t, ctx, byTestID("active-digest")); got != to {
		t.Errorf("active release = %q, want the earlier %q", got, to)
	}

	// The audit trail is for auditors and admins: erin follows the link.
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("carol signs out: %v", err)
	}
	signIn(t, ctx, p, "erin")
	err = chromedp.Do(ctx,
		chromedp.Navigate(p.URL+auditLink),
		chromedp.WaitVisible(byTestID("audit-table")),
	)
	if err != nil {
		t.Fatalf("open the run's audit events: %v\nwarden logs:\n%s", err, p.logs)
	}
	got := textOf(t, ctx, byTestID("event-sentence"))
	if !strings.Contains(got, "Carol") || !strings.Contains(got, "Roll back to the previous release") || !strings.Contains(got, "refunds misrouted since the release") {
		t.Errorf("audit event = %q, want carol's runbook action with its reason", got)
	}
	screenshot(ctx, "runbook-audit")
	p.stop(t)
}
