package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserReleaseRollback: carol (on-call) opens Releases from the
// navigation, presses "Roll back to this release" on the demo agent's
// earlier release, sees what changes, confirms with a reason, and the page
// shows the earlier release active.
func TestBrowserReleaseRollback(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "carol")

	err := chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/releases"]`)),
		chromedp.WaitVisible(byTestID("release-history")),
	)
	if err != nil {
		t.Fatalf("open Releases from the navigation: %v\nwarden logs:\n%s", err, p.logs)
	}
	testID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="release-history"] a[data-testid^="rollback-"]').dataset.testid`))
	if err != nil || !strings.HasPrefix(testID, "rollback-") {
		t.Fatalf("no Roll back on an earlier release: %q, %v", testID, err)
	}
	earlier := strings.TrimPrefix(testID, "rollback-")
	before := textOf(t, ctx, byTestID("active-digest"))
	if strings.HasPrefix(before, "sha256:"+earlier) {
		t.Fatalf("the earlier release %s is already active", earlier)
	}
	screenshot(ctx, "releases")

	err = chromedp.Do(ctx,
		chromedp.Click(byTestID(testID)),
		chromedp.WaitVisible(byTestID("rollback-submit")),
	)
	if err != nil {
		t.Fatalf("press Roll back to this release: %v", err)
	}
	if got := textOf(t, ctx, byTestID("diff-changed")); got != "Changed: prompt, routing and skills." {
		t.Errorf("confirmation diff = %q, want prompt, routing and skills", got)
	}
	screenshot(ctx, "release-rollback-confirm")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(byTestID("rollback-reason"), "new prompt misroutes refunds"),
		chromedp.Click(byTestID("rollback-submit")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("confirm the rollback: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("active-digest")); !strings.HasPrefix(got, "sha256:"+earlier) {
		t.Errorf("active release after rollback = %q, want the earlier sha256:%s…", got, earlier)
	}
	if hist := textOf(t, ctx, byTestID("release-history")); !strings.Contains(hist, "new prompt misroutes refunds") || !strings.Contains(hist, "rolled back") {
		t.Errorf("history = %q, want the rollback with its reason", hist)
	}
	screenshot(ctx, "release-rolled-back")
	p.stop(t)
}
