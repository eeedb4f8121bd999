package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases/releasetest"
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

// TestBrowserRollbackShowsLineDiffs: carol opens another agent's releases
// from Releases, presses Roll back on its earlier release, and before
// confirming reads what changes in the prompt and in the refunds skill's
// SKILL.md as a code review shows it: removed lines red with -, added
// lines green with +, unchanged front matter folded.
func TestBrowserRollbackShowsLineDiffs(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	earlier, _ := releasetest.DiffPair(t, db)
	db.Close()

	ctx := newBrowserContext(t)
	p := startProcess(t, dir)
	signIn(t, ctx, p, "carol")
	target := `[data-testid="release-targets"] a[href*="agent=` + releasetest.Agent + `"]`
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/releases"]`)),
		chromedp.WaitVisible(css(target)),
		chromedp.Click(css(target)),
		chromedp.WaitVisible(byTestID("rollback-"+earlier[7:19])),
		chromedp.Click(byTestID("rollback-"+earlier[7:19])),
		chromedp.WaitVisible(byTestID("rollback-submit")),
		chromedp.WaitVisible(css(`[data-testid="diff-content-prompt"] [data-testid="line-removed"]`)),
	)
	if err != nil {
		t.Fatalf("open the rollback confirmation: %v\nwarden logs:\n%s", err, p.logs)
	}
	screenshot(ctx, "release-rollback-line-diff")
	type row struct{ Kind, Mark, Text, Color string }
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll('[data-testid="diff-content-skill-refunds"] tr[data-testid^="line-"]')].map(r => ({
		Kind: r.dataset.testid, Mark: r.querySelector('.mark').textContent, Text: r.querySelector('.code').textContent,
		Color: getComputedStyle(r).backgroundColor}))`))
	if err != nil {
		t.Fatal(err)
	}
	var removed, added []string
	colors := map[string]string{}
	for _, r := range rows {
		colors[r.Kind] = r.Color
		switch r.Kind {
		case "line-removed":
			if r.Mark != "-" {
				t.Errorf("removed line %q marked %q, want -", r.Text, r.Mark)
			}
			removed = append(removed, r.Text)
		case "line-added":
			if r.Mark != "+" {
				t.Errorf("added line %q marked %q, want +", r.Text, r.Mark)
			}
			added = append(added, r.Text)
		}
	}
	if strings.Join(removed, "|") != "Refund at most what remains refundable." || strings.Join(added, "|") != "Refund what the customer paid." {
		t.Errorf("SKILL.md lines: removed %q, added %q", removed, added)
	}
	// Green for added and red for removed: rgb(232, 245, 236) and rgb(253, 236, 234) in app.css.
	if colors["line-added"] != "rgb(232, 245, 236)" || colors["line-removed"] != "rgb(253, 236, 234)" || colors["line-skipped"] == "" {
		t.Errorf("row colours = %v, want green added, red removed and a folded stretch", colors)
	}
	if got := textOf(t, ctx, css(`[data-testid="diff-content-prompt"]`)); !strings.Contains(got, "<b>Never</b> promise a delivery date.") {
		t.Errorf("prompt diff = %q, want the removed line with its markup shown as text", got)
	}
	p.stop(t)
}
