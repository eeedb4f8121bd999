package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserKeyScopesOnAPhone: on a 390 px phone erin opens Keys from
// the menu, opens the demo key and gives it one more skill. The scopes
// form says it needs a second admin; she lands on the pending change,
// whose before and after (the key's whole scope list) are in sight and
// not cut off. Frank approves it.
func TestBrowserKeyScopesOnAPhone(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "erin")
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(phoneWidth, 844),
		chromedp.Navigate(p.URL+"/"),
		chromedp.Click(byTestID("menu-button")),
		chromedp.Click(css(`nav.nav a[href="/keys"]`)),
		chromedp.WaitVisible(css(`tbody tr td > a[href^="/keys/"]`)),
		chromedp.Click(css(`tbody tr td > a[href^="/keys/"]`)),
		chromedp.WaitVisible(byTestID("key-scopes-form")),
	)
	if err != nil {
		t.Fatalf("erin opens the demo key from the menu: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	if got := textOf(t, ctx, css(`[data-testid="key-scopes-form"] [data-testid="needs-second-admin"]`)); !strings.Contains(got, "Needs a second admin") {
		t.Errorf("the scopes form says %q before it is sent, want that it needs a second admin", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(css(`[data-testid="key-scopes-form"] input[type=checkbox][name=scopes][value="skill:customer_email"]`)),
		chromedp.Click(byTestID("key-scopes-save")),
		chromedp.WaitVisible(byTestID("change-status")),
	)
	if err != nil {
		t.Fatalf("erin adds a skill: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	if got := textOf(t, ctx, byTestID("change-status")); got != "waiting for a second admin" {
		t.Errorf("status = %q, want waiting for a second admin", got)
	}
	fits(t, ctx, "the pending change", phoneWidth)
	cells := phoneCells(t, ctx, "change-diff")
	if len(cells) == 0 {
		t.Fatal("the change page shows no diff")
	}
	for _, c := range cells {
		if c.Left < 0 || c.Right > phoneWidth || c.Clipped {
			t.Errorf("diff cell %q (%s) at %.0f–%.0f px, cut off %v, at %d px", c.Text, c.Label, c.Left, c.Right, c.Clipped, phoneWidth)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}
	approveChangeAsFrank(t, ctx, p)
}
