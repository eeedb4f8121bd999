package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// tabStop is one element the Tab key gave the focus to.
type tabStop struct {
	Desc      string // tag, data-testid or id, text
	Match     bool   // it is the element sought
	Shown     bool   // laid out with a size, not hidden
	InSight   bool   // inside the viewport once focused
	Indicator bool   // an outline or a ring shows the focus
	InOrder   bool   // it follows the previous stop in the document
	InNav     bool   // it is in the navigation (behind Menu on a phone)
}

const tabStopJS = `((sel) => {
	const e = document.activeElement, r = e.getBoundingClientRect(), s = getComputedStyle(e);
	const prev = window.__tabPrev; window.__tabPrev = e;
	return {
		Desc: e.tagName.toLowerCase() + (e.dataset.testid ? '[' + e.dataset.testid + ']' : e.id ? '#' + e.id : '') + ' ' + (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 30),
		Match: e.matches(sel),
		Shown: r.width > 0 && r.height > 0 && e.checkVisibility({visibilityProperty: true}),
		InSight: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth,
		Indicator: (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none',
		InNav: !!e.closest('nav.nav'),
		InOrder: !prev || !prev.isConnected || !!(prev.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING),
	};
})`

// tabTo presses Tab until the element matching sel has the focus, at most
// max times, and fails when a stop on the way is hidden, out of sight,
// shows no focus ring, or comes before the previous one in the page. It
// returns the stops, the last one sel's.
func tabTo(t *testing.T, ctx context.Context, sel string, max int) []tabStop {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.__tabPrev = null, true)`)); err != nil {
		t.Fatal(err)
	}
	var stops []tabStop
	for range max {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatalf("Tab towards %s: %v", sel, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[tabStop](tabStopJS+`(`+jsString(sel)+`)`))
		if err != nil {
			t.Fatalf("Tab towards %s: %v", sel, err)
		}
		stops = append(stops, s)
		if !s.Shown || !s.InSight || !s.Indicator || !s.InOrder {
			t.Errorf("Tab %d towards %s focused %q: shown %v, in sight %v, focus ring %v, after the previous stop %v", len(stops), sel, s.Desc, s.Shown, s.InSight, s.Indicator, s.InOrder)
		}
		if s.Match {
			return stops
		}
	}
	var path []string
	for _, s := range stops {
		path = append(path, s.Desc)
	}
	t.Fatalf("%d Tabs never reached %s; the focus went %q", max, sel, path)
	return nil
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// TestBrowserKeyboardApproveAndRunbook: the two flows people do most, by
// the keyboard alone. alice, on her phone, tabs from the top of her
// approvals queue (the skip link first, then the Menu button, and none of
// the closed menu's links), opens the $45.50 refund with Enter, tabs to
// the comment, types it, tabs to Approve and presses Space: the decision
// is recorded. carol, at her desk, tabs through the runbook list to "Bad
// release: roll back", opens it with Enter, tabs to its Roll back button
// and opens the confirmation with Enter, types the reason and sends it
// with Enter on the confirm button. Every stop on the way shows, in
// sight, with a focus ring, in the page's order.
func TestBrowserKeyboardApproveAndRunbook(t *testing.T) {
	p := startProcess(t, "")

	ctx := newBrowserContext(t)
	signIn(t, ctx, p, "alice")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 844), chromedp.Navigate(p.URL+"/approvals?max=50"), chromedp.WaitVisible(firstQueueRow)); err != nil {
		t.Fatalf("alice's queue: %v\nwarden logs:\n%s", err, p.logs)
	}
	stops := tabTo(t, ctx, `a.queue-summary`, 40)
	if !strings.Contains(stops[0].Desc, "Skip to content") {
		t.Errorf("the first Tab focused %q, want the skip link", stops[0].Desc)
	}
	for _, s := range stops {
		if s.InNav {
			t.Errorf("with the menu closed the Tab key reached the navigation's %q", s.Desc)
		}
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(byTestID("action-summary"))); err != nil {
		t.Fatalf("Enter on the queue's first row: %v; at %s", err, location(t, ctx))
	}
	if s := textOf(t, ctx, byTestID("action-summary")); !strings.Contains(s, "$45.50") {
		t.Fatalf("Enter opened %q, want the $45.50 refund", s)
	}
	tabTo(t, ctx, `#approve-comment`, 60)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("label checked, refund due")); err != nil {
		t.Fatal(err)
	}
	tabTo(t, ctx, `[data-testid="approve"]`, 1)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(" "), chromedp.WaitVisible(byTestID("notice"))); err != nil {
		t.Fatalf("Space on Approve: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	if d := textOf(t, ctx, byTestID("decisions")); !strings.Contains(d, "label checked, refund due") {
		t.Errorf("after Space on Approve the decisions read %q, want alice's approval with her comment", d)
	}

	ctx = newBrowserContext(t)
	signIn(t, ctx, p, "carol")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900), chromedp.Navigate(p.URL+"/runbooks"), chromedp.WaitVisible(byTestID("runbooks"))); err != nil {
		t.Fatalf("carol's runbooks: %v", err)
	}
	tabTo(t, ctx, `[data-testid="runbook-bad-release-rollback"] a`, 60)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(byTestID("runbook-doc"))); err != nil {
		t.Fatalf("Enter on the runbook's link: %v; at %s", err, location(t, ctx))
	}
	tabTo(t, ctx, `[data-testid="action-rollback"]`, 60)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(byTestID("runbook-submit"))); err != nil {
		t.Fatalf("Enter on Roll back: %v; at %s", err, location(t, ctx))
	}
	tabTo(t, ctx, `[data-testid="runbook-reason"]`, 60)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("refunds misrouted since the release")); err != nil {
		t.Fatal(err)
	}
	tabTo(t, ctx, `[data-testid="runbook-submit"]`, 5)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(byTestID("runbook-result"))); err != nil {
		t.Fatalf("Enter on the confirm button: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	if got := textOf(t, ctx, byTestID("run-status")); got != "Done" {
		t.Errorf("run status = %q (%s), want Done", got, textOf(t, ctx, byTestID("run-outcome")))
	}
	p.stop(t)
}
