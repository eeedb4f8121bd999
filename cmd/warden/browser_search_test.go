package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserSearchFindsTheRefundToReverse: alice approves ORD-1002's $54
// refund and Warden executes it. carol, on call, types the order id into
// the header's search, finds the executed refund among the results and
// opens it; then, from the Actions list in the navigation, filters to
// executed refunds and finds it there too — without reading Traces.
func TestBrowserSearchFindsTheRefundToReverse(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "alice")
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/approvals?min=50&max=100"),
		chromedp.WaitVisible(byTestID("approvals-table")),
		chromedp.Click(css(`[data-testid="approvals-table"] a.queue-summary`)),
		chromedp.WaitVisible(byTestID("approve")),
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("alice approves the $54 refund: %v\nwarden logs:\n%s", err, p.logs)
	}
	waitActionStatus(t, ctx, p, "executed")
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("sign out: %v", err)
	}

	signIn(t, ctx, p, "carol")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(byTestID("header-search"), "ord-1002"+kb.Enter),
		chromedp.WaitVisible(byTestID("search-actions")),
	)
	if err != nil {
		t.Fatalf("carol searches the order id from the header: %v\nwarden logs:\n%s", err, p.logs)
	}
	screenshot(ctx, "search-results")
	executed := `[data-testid="search-actions"] tr[data-row-status="executed"]`
	if got := textOf(t, ctx, css(executed)); !strings.Contains(got, "ORD-1002") || !strings.Contains(got, "$54.00") {
		t.Fatalf("the executed result reads %q, want ORD-1002's $54.00 refund", got)
	}
	if n := countOf(t, ctx, `[data-testid="search-journeys"] tr[data-testid^="journey-"]`); n == 0 {
		t.Error("on-call's search lists no journey for the refund")
	}
	if n := countOf(t, ctx, `[data-testid="search-events"]`); n != 0 {
		t.Error("on-call's search lists audit events she may not open")
	}
	err = chromedp.Do(ctx,
		chromedp.Click(css(executed+` a[data-testid="action-link"]`)),
		chromedp.WaitVisible(byTestID("reverse")),
	)
	if err != nil {
		t.Fatalf("open the executed refund from the results: %v", err)
	}
	if got := textOf(t, ctx, byTestID("action-summary")); !strings.Contains(got, "ORD-1002") {
		t.Errorf("opened %q, want ORD-1002's refund", got)
	}
	screenshot(ctx, "search-opened")

	// The Actions list: executed refunds only.
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/actions"]`)),
		chromedp.WaitVisible(byTestID("actions-table")),
		chromedp.SetValue(css("#status"), "executed"),
		chromedp.SetValue(css("#tool"), "issue_refund"),
		chromedp.Click(byTestID("action-filter-apply")),
	)
	if err != nil {
		t.Fatalf("filter the Actions list: %v\nwarden logs:\n%s", err, p.logs)
	}
	// The old page has a table too: wait for the filtered one.
	waitFor(t, "the filtered Actions list", func() bool { return strings.Contains(location(t, ctx), "status=executed") })
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("actions-table"))); err != nil {
		t.Fatalf("the filtered list: %v", err)
	}
	screenshot(ctx, "actions-executed-refunds")
	if u := location(t, ctx); !strings.Contains(u, "status=executed") || !strings.Contains(u, "tool=issue_refund") {
		t.Errorf("filtered to %s", u)
	}
	rows := countOf(t, ctx, `[data-testid="actions-table"] tbody tr`)
	others := countOf(t, ctx, `[data-testid="actions-table"] tbody tr:not([data-row-status="executed"]), [data-testid="actions-table"] tbody tr:not([data-tool="issue_refund"])`)
	if rows != 1 || others != 0 {
		t.Errorf("the filtered list has %d rows, %d not executed refunds; want the one", rows, others)
	}
	if got := textOf(t, ctx, css(`[data-testid="actions-table"] tbody tr`)); !strings.Contains(got, "ORD-1002") {
		t.Errorf("the executed refund row reads %q", got)
	}
	// Pending ones are there under their own status, and none executed yet.
	err = chromedp.Do(ctx,
		chromedp.SetValue(css("#status"), "pending"),
		chromedp.Click(byTestID("action-filter-apply")),
	)
	if err != nil {
		t.Fatalf("filter pending: %v", err)
	}
	waitFor(t, "the pending refunds", func() bool { return strings.Contains(location(t, ctx), "status=pending") })
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("actions-table"))); err != nil {
		t.Fatalf("the pending list: %v", err)
	}
	if n := countOf(t, ctx, `[data-testid="actions-table"] tbody tr[data-row-status="pending"]`); n != 2 {
		t.Errorf("pending refunds listed: %d, want the demo's other two", n)
	}
}

func countOf(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
	if err != nil {
		t.Fatalf("count %s: %v", sel, err)
	}
	return n
}
