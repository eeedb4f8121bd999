package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// signOutAndIn ends the browser's session and signs user in.
func signOutAndIn(t *testing.T, ctx context.Context, p *process, user string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(byTestID("logout")), chromedp.Click(byTestID("logout")),
		chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	signIn(t, ctx, p, user)
}

// approveChangeAsFrank signs frank in, opens the Changes queue from the
// navigation, opens the newest pending change and approves it.
func approveChangeAsFrank(t *testing.T, ctx context.Context, p *process) {
	t.Helper()
	signOutAndIn(t, ctx, p, "frank")
	err := chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/changes"]`)),
		chromedp.WaitVisible(byTestID("changes-pending")),
		chromedp.Click(css(`[data-testid="changes-pending"] tbody tr:last-child [data-testid="change-link"]`)),
		chromedp.WaitVisible(byTestID("change-approve")),
		chromedp.Click(byTestID("change-approve")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("frank approves the change: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("change-status")); !strings.Contains(got, "approved by Frank Admin and applied") {
		t.Errorf("after frank approved, the change says %q", got)
	}
}

// TestBrowserChangesQueue: erin raises acme's dual-control threshold from
// $1,000.00 to $1,000,000.00. The form says it needs a second admin; she
// lands on the pending change, and nothing changed. The tenant page shows
// the pending change. Frank finds it in the Changes queue with who asked
// and why, reads the before and after, and approves; it applies.
func TestBrowserChangesQueue(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")

	signIn(t, ctx, p, "erin")
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/tenants/acme"),
		chromedp.WaitVisible(byTestID("tenant-dual-control-form")),
	)
	if err != nil {
		t.Fatalf("open acme: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, css(`[data-testid="tenant-dual-control-form"] [data-testid="needs-second-admin"]`)); !strings.Contains(got, "Needs a second admin") {
		t.Errorf("the threshold form says %q before it is sent, want that it needs a second admin", got)
	}
	err = chromedp.Do(ctx,
		chromedp.SetValue(css(`#dual_control_currency`), "USD"),
		chromedp.SetValue(css(`#dual_control`), "1000000.00"),
		chromedp.SetValue(css(`#dual-control-reason`), "Finance approved bulk refunds for the recall"),
		chromedp.Submit(css(`#dual_control`)),
		chromedp.WaitVisible(byTestID("change-status")),
	)
	if err != nil {
		t.Fatalf("raise the threshold: %v\nwarden logs:\n%s", err, p.logs)
	}
	if loc := location(t, ctx); !strings.Contains(loc, "/changes/chg_") {
		t.Errorf("saving landed on %s, want the pending change", loc)
	}
	if got := textOf(t, ctx, byTestID("change-status")); got != "waiting for a second admin" {
		t.Errorf("status = %q, want waiting for a second admin", got)
	}
	if got := textOf(t, ctx, byTestID("change-why")); !strings.Contains(got, "another admin must decide") {
		t.Errorf("erin is told %q, want that another admin decides", got)
	}
	screenshot(ctx, "change-pending")
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/tenants/acme"), chromedp.WaitVisible(byTestID("pending-changes"))); err != nil {
		t.Fatalf("the tenant page shows no pending change: %v", err)
	}
	if got := textOf(t, ctx, byTestID("tenant-dual-control")); !strings.Contains(got, "$1,000.00") || strings.Contains(got, "1,000,000") {
		t.Errorf("before approval the threshold reads %q, want still $1,000.00", got)
	}

	signOutAndIn(t, ctx, p, "frank")
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(byTestID("home-pending-changes")),
		chromedp.Click(css(`nav.nav a[href="/changes"]`)),
		chromedp.WaitVisible(byTestID("changes-pending")),
	)
	if err != nil {
		t.Fatalf("frank opens the queue: %v\nwarden logs:\n%s", err, p.logs)
	}
	row := textOf(t, ctx, css(`[data-testid="changes-pending"] tbody tr`))
	for _, want := range []string{"Change acme's dual-control threshold in USD from $1,000.00 to $1,000,000.00", "Erin Admin", "Finance approved bulk refunds"} {
		if !strings.Contains(row, want) {
			t.Errorf("the queue's row reads %q, want %q in it", row, want)
		}
	}
	screenshot(ctx, "changes-queue")
	err = chromedp.Do(ctx,
		chromedp.Click(css(`[data-testid="change-link"]`)),
		chromedp.WaitVisible(byTestID("change-diff")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if b, a := textOf(t, ctx, css(`[data-testid="diff-shown"] [data-testid="diff-before"]`)), textOf(t, ctx, css(`[data-testid="diff-shown"] [data-testid="diff-after"]`)); b != "$1,000.00" || a != "$1,000,000.00" {
		t.Errorf("diff reads %q → %q, want $1,000.00 → $1,000,000.00", b, a)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("change-approve")),
		chromedp.WaitVisible(byTestID("notice")),
		chromedp.Navigate(p.URL+"/tenants/acme"),
		chromedp.WaitVisible(byTestID("tenant-dual-control")),
	)
	if err != nil {
		t.Fatalf("frank approves: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("tenant-dual-control")); !strings.Contains(got, "$1,000,000.00") {
		t.Errorf("after approval the threshold reads %q, want $1,000,000.00", got)
	}
	p.stop(t)
}
