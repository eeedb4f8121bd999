package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserKeyExpiryOnAPhone: on a 390 px phone erin opens the demo key
// (no expiry) and, with the keyboard alone, types a date into its expiry
// field and sends it with Enter. Yesterday is refused next to the field,
// the date she typed still in it; a date a month ahead applies at once.
// Clearing the field (no expiry) says beforehand that it needs a second
// admin and lands on the pending change, whose before and after are in
// sight; frank approves it and the key no longer expires.
func TestBrowserKeyExpiryOnAPhone(t *testing.T) {
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
		chromedp.WaitVisible(byTestID("key-expiry-form")),
	)
	if err != nil {
		t.Fatalf("erin opens the demo key from the menu: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	if got := textOf(t, ctx, css(`[data-testid="key-expiry-form"] [data-testid="needs-second-admin"]`)); !strings.Contains(got, "Needs a second admin") {
		t.Errorf("the expiry form says %q before it is sent, want that it needs a second admin", got)
	}
	fits(t, ctx, "the key page", phoneWidth)
	value := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('key_expires_at').value`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// typeDate focuses the field from the keyboard's point of view and
	// types the date as Chrome's date field takes it (month, day, year),
	// then sends the form with Enter.
	typeDate := func(d time.Time, wait chromedp.Action[chromedp.Void]) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.Focus(css("#key_expires_at")),
			chromedp.KeyEvent(d.Format("01")), chromedp.KeyEvent(d.Format("02")), chromedp.KeyEvent(d.Format("2006")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if got := value(); got != d.Format("2006-01-02") {
			t.Fatalf("typing %s into the expiry field left %q", d.Format("01/02/2006"), got)
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), wait); err != nil {
			t.Fatalf("sending the expiry %s: %v; at %s\nwarden logs:\n%s", d.Format("2006-01-02"), err, location(t, ctx), p.logs)
		}
	}

	yesterday := time.Now().UTC().AddDate(0, 0, -1)
	typeDate(yesterday, chromedp.WaitVisible(css(`[data-testid="key-expiry-form"] [data-testid="error-expires_at"]`)))
	if got := textOf(t, ctx, css(`[data-testid="error-expires_at"]`)); got != "The expiry must be in the future." {
		t.Errorf("yesterday's expiry says %q", got)
	}
	if got := value(); got != yesterday.Format("2006-01-02") {
		t.Errorf("after the refusal the field holds %q, not the date typed", got)
	}
	fits(t, ctx, "the key page with the expiry refused", phoneWidth)

	ahead := time.Now().UTC().AddDate(0, 1, 0)
	typeDate(ahead, chromedp.WaitVisible(css(`[data-testid="key-expiry"] [data-testid="notice"]`)))
	if got := textOf(t, ctx, css(`[data-testid="key-expiry"] [data-testid="notice"]`)); got != "Expiry saved. The key is refused from then on." {
		t.Errorf("setting an expiry says %q", got)
	}

	// No expiry: the field emptied, sent with Enter.
	err = chromedp.Do(ctx,
		chromedp.SetValue(css("#key_expires_at"), ""),
		chromedp.Focus(css("#key_expires_at")),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(byTestID("change-status")),
	)
	if err != nil {
		t.Fatalf("erin removes the expiry: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
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
	err = chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/keys"),
		chromedp.Click(css(`tbody tr td > a[href^="/keys/"]`)),
		chromedp.WaitVisible(byTestID("key-expiry-form")),
	)
	if err != nil {
		t.Fatalf("frank opens the key: %v", err)
	}
	if got := value(); got != "" {
		t.Errorf("after frank approved, the key's expiry field holds %q, want empty (no expiry)", got)
	}
}
