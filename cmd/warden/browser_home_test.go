package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// attachScreenshot writes a PNG of the whole page and logs its path, so a
// failed (or passing) run shows what the user saw. The files go to
// WARDEN_SCREENSHOTS when set, else to a directory under the system's
// temporary directory that outlives the test.
func attachScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("WARDEN_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "warden-screenshots", t.Name())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG; below, JPEG
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot %s: %s", name, path)
}

// slicedToken is a redaction token ("[iban:d38bf348]") cut before its
// closing bracket, or its tail without its opening: either reads as data.
var slicedToken = regexp.MustCompile(`\[[a-z_]+:[0-9a-f]{0,7}(?:[^0-9a-f\]]|$)|(?:^|[^0-9a-f:])[0-9a-f]{1,7}\]`)

// checkNoSlicedTokens fails when the page's text holds a redaction token
// cut in half.
func checkNoSlicedTokens(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatalf("read %s: %v", where, err)
	}
	for _, line := range strings.Split(text, "\n") {
		if m := slicedToken.FindString(line); m != "" && strings.Contains(line, "[") {
			t.Errorf("%s shows a sliced redaction token %q in %q", where, m, line)
		}
	}
}

// checkFitsWidth fails when the page scrolls sideways in the 1280 px
// window the browser tests use: tables must keep a readable width.
func checkFitsWidth(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	w, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth,
		...Array.from(document.querySelectorAll('.table-wrap')).map(e => e.scrollWidth - e.clientWidth)]`))
	if err != nil {
		t.Fatalf("measure %s: %v", where, err)
	}
	if w[0] > w[1] {
		t.Errorf("%s is %d px wide in a %d px window", where, w[0], w[1])
	}
	for i, over := range w[2:] {
		if over > 0 {
			cols, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('.table-wrap th')).map(th => th.textContent.trim() + ":" + Math.round(th.getBoundingClientRect().width))`))
			t.Logf("column widths: %v", cols)
			t.Errorf("%s: table %d scrolls sideways by %d px in a %d px window", where, i+1, over, w[1])
		}
	}
}

// TestBrowserHomeApproverInbox: alice's home lists the three demo refunds
// as waiting for her. She opens the $2,400 one from there and approves it;
// back home it waits on others (it needs a second approver) and her
// decision is listed with its outcome.
func TestBrowserHomeApproverInbox(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "alice")
	if got := textOf(t, ctx, byTestID("waiting-count")); got != "3" {
		t.Fatalf("home says %q waiting for alice, want 3\n%s", got, textOf(t, ctx, byTestID("home-waiting")))
	}
	waiting := textOf(t, ctx, byTestID("waiting-list"))
	for _, want := range []string{"$2,400.00", "$45.50", "$54.00"} {
		if !strings.Contains(waiting, want) {
			t.Errorf("waiting list lacks the %s refund: %q", want, waiting)
		}
	}
	checkNoSlicedTokens(t, ctx, "alice's home")
	attachScreenshot(t, ctx, "home-alice-inbox")

	// The $2,400 refund's link, found by its text as a person would.
	big, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('[data-testid="waiting-list"] li a')).find(a => a.textContent.includes("$2,400"))?.getAttribute("href") ?? ""`))
	if err != nil || big == "" {
		t.Fatalf("no link to the $2,400 refund on alice's home (%v)", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(css(`[data-testid="waiting-list"] a[href="`+big+`"]`)),
		chromedp.WaitVisible(byTestID("action-summary")),
	)
	if err != nil {
		t.Fatalf("alice opens the $2,400 refund from her home: %v\nwarden logs:\n%s", err, p.logs)
	}
	action := location(t, ctx)
	actionID := action[strings.LastIndex(action, "/")+1:]
	err = chromedp.Do(ctx,
		chromedp.SendKeys(css("#approve-comment"), "return slip checked"),
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("notice")),
		chromedp.Click(css(`nav.nav a[href="/"]`)),
		chromedp.WaitVisible(byTestID("home-on-others")),
	)
	if err != nil {
		t.Fatalf("alice approves and goes home: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("waiting-count")); got != "2" {
		t.Errorf("after approving, %q wait for alice, want 2", got)
	}
	if got := textOf(t, ctx, byTestID("on-others-"+actionID)); !strings.Contains(got, "$2,400.00") || !strings.Contains(got, "needs 1 more approval") {
		t.Errorf("waiting on others = %q, want the $2,400 refund needing 1 more approval", got)
	}
	if got := textOf(t, ctx, css(`[data-testid="decision-`+actionID+`"]`)); !strings.Contains(got, "You approved") || !strings.Contains(got, "Awaiting approval") {
		t.Errorf("recent decision = %q", got)
	}
	checkNoSlicedTokens(t, ctx, "alice's home after approving")
	checkFitsWidth(t, ctx, "alice's home")
	attachScreenshot(t, ctx, "home-alice-waiting-on-others")
	p.stop(t)
}

// TestBrowserAuditRowToAction: dave, an auditor, goes from a row of the
// audit trail to the action it is about by clicking, never typing a URL.
func TestBrowserAuditRowToAction(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "dave")
	err := chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/audit"]`)),
		chromedp.WaitVisible(byTestID("audit-table")),
	)
	if err != nil {
		t.Fatalf("dave opens the audit trail: %v\nwarden logs:\n%s", err, p.logs)
	}
	checkNoSlicedTokens(t, ctx, "the audit trail")
	checkFitsWidth(t, ctx, "the audit trail")
	attachScreenshot(t, ctx, "audit-trail-dave")
	sel := css(`[data-testid="audit-table"] tbody tr [data-testid="subject-link"][href^="/approvals/"]`)
	attrs, err := chromedp.Run(ctx, chromedp.Attributes(sel))
	href := attrs["href"]
	if err != nil || href == "" {
		t.Fatalf("no audit row links to an action (%v)", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(sel),
		chromedp.WaitVisible(byTestID("action-summary")),
	)
	if err != nil {
		t.Fatalf("dave clicks the row's action link: %v\nwarden logs:\n%s", err, p.logs)
	}
	if loc := location(t, ctx); !strings.HasSuffix(loc, href) {
		t.Errorf("landed on %s, want %s", loc, href)
	}
	if s := textOf(t, ctx, byTestID("action-summary")); !strings.HasPrefix(s, "Refund") {
		t.Errorf("action page summary = %q", s)
	}
	checkNoSlicedTokens(t, ctx, "the action page")
	attachScreenshot(t, ctx, "audit-row-to-action")

	// From the traces, too: the journey that asked for an action links it.
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/traces"]`)),
		chromedp.WaitVisible(byTestID("traces-table")),
	)
	if err != nil {
		t.Fatalf("dave opens the traces: %v", err)
	}
	checkNoSlicedTokens(t, ctx, "the traces")
	checkFitsWidth(t, ctx, "the traces")
	attachScreenshot(t, ctx, "traces-dave")
	err = chromedp.Do(ctx,
		chromedp.Click(css(`[data-testid="traces-table"] [data-testid="trace-action-link"]`)),
		chromedp.WaitVisible(byTestID("action-summary")),
	)
	if err != nil {
		t.Fatalf("dave clicks a trace's action link: %v\nwarden logs:\n%s", err, p.logs)
	}
	p.stop(t)
}
