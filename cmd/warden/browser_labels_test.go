package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/wardenhq/warden/platform/store/storetest"
)

// focused is the data-testid (or id) of the element that has the focus.
func focused(t *testing.T, ctx context.Context) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const e = document.activeElement; return e ? (e.dataset.testid || e.id || e.tagName.toLowerCase()) : ""; })()`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// queueItems are the Labelling queue's rows: journey id by the skill it
// was routed to.
func queueItems(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[][2]string](`Array.from(document.querySelectorAll('[data-testid^="label-item-"]')).map(r => [r.cells[2].textContent.trim(), r.dataset.testid.slice("label-item-".length)])`))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r[0]] = r[1]
	}
	return out
}

// labelByKeyboard opens journey id from the Labelling queue with the
// keyboard (its link focused, Enter) and labels its route with the keys
// alone: Space on Right or Wrong, Tab to the skill list, the skill's
// name typed to pick it (expected; "" leaves it), Tab to Save, Enter.
func labelByKeyboard(t *testing.T, ctx context.Context, p *process, id, verdict, expected string) string {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Focus(css(`[data-testid="label-item-`+id+`"] a`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(byTestID("route-label-form")),
		chromedp.Focus(byTestID("label-"+verdict)),
		chromedp.KeyEvent(" "),
		chromedp.KeyEvent(kb.Tab),
	)
	if err != nil {
		t.Fatalf("open %s from the queue and choose %s: %v\nwarden logs:\n%s", id, verdict, err, p.logs)
	}
	if got := focused(t, ctx); got != "label-expected" {
		t.Fatalf("Tab from the verdict went to %q, want the skill list", got)
	}
	if expected != "" {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(expected)); err != nil {
			t.Fatal(err)
		}
		if got := attr(t, ctx, css(`#label-expected option:checked`), "value"); got != expected {
			t.Fatalf("typing %q in the skill list chose %q", expected, got)
		}
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	if got := focused(t, ctx); got != "label-submit" {
		t.Fatalf("Tab from the skill list went to %q, want Save label", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(byTestID("route-label-current"))); err != nil {
		t.Fatalf("save the label of %s: %v\nwarden logs:\n%s", id, err, p.logs)
	}
	return textOf(t, ctx, byTestID("route-label-current"))
}

// TestBrowserLabellingRoutes: the demo's labels show on the Releases page
// (3 of 6 routed right). Erin (admin) has every journey of the day
// proposed; carol (on call) opens Labelling from the navigation, finds the
// demo's unlabelled order-support journey and a misrouted order-status
// question of the agent's, and labels both with the keyboard: the first
// right, the second wrong — it belonged to order_support. Both leave the
// queue, and the Releases page counts them: 4 of 8, a second journey
// routed to order_status that belonged to order_support. On a 390 px
// phone the queue, the label form and the accuracy fit the screen, and
// the form's controls are in sight. With WARDEN_TEST_POSTGRES set, the
// process keeps its data in PostgreSQL.
func TestBrowserLabellingRoutes(t *testing.T) {
	ctx := newBrowserContext(t)
	var env []string
	if storetest.Postgres() {
		env = append(env, "WARDEN_DATABASE_URL="+storetest.URL(t), "WARDEN_DB_MAX_CONNS=5")
	}
	p := startProcess(t, "", env...)
	if status, code := runJourney(t, p, "When will ORD-1001 arrive? Please send it to my office instead"); status != 200 {
		t.Fatalf("journey = %d %s", status, code)
	}

	signIn(t, ctx, p, "erin")
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/releases"),
		chromedp.WaitVisible(byTestID("route-accuracy-total")),
	)
	if err != nil {
		t.Fatalf("open Releases: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("route-accuracy-total")); !strings.HasPrefix(got, "50.0 % of 6 labelled journeys routed right (3).") {
		t.Errorf("the demo's route accuracy reads %q, want 50.0 %% of 6 (3)", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/labels"),
		chromedp.WaitVisible(byTestID("label-settings-form")),
		chromedp.SetValue(css("#label-sample"), "100"),
		chromedp.Submit(css("#label-sample")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("erin samples every journey: %v\nwarden logs:\n%s", err, p.logs)
	}

	signOutAndIn(t, ctx, p, "carol")
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/labels"]`)),
		chromedp.WaitVisible(byTestID("label-queue-table")),
	)
	if err != nil {
		t.Fatalf("carol opens Labelling: %v\nwarden logs:\n%s", err, p.logs)
	}
	items := queueItems(t, ctx)
	support, status := items["order_support"], items["order_status"]
	if len(items) != 2 || support == "" || status == "" {
		t.Fatalf("the queue proposes %v, want the demo's order_support journey and the agent's order_status one", items)
	}
	screenshot(ctx, "labels-queue")

	if got := labelByKeyboard(t, ctx, p, support, "right", ""); !strings.Contains(got, "Labelled right") || !strings.Contains(got, "Carol") {
		t.Errorf("after labelling right the trace says %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/labels"), chromedp.WaitVisible(byTestID("label-queue-table"))); err != nil {
		t.Fatal(err)
	}

	// The second on a phone.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 844), chromedp.Reload(), chromedp.WaitVisible(byTestID("label-queue-table"))); err != nil {
		t.Fatal(err)
	}
	fits(t, ctx, "Labelling", phoneWidth)
	err = chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/traces/"+status+"#route-label"),
		chromedp.WaitVisible(byTestID("route-label-form")),
	)
	if err != nil {
		t.Fatal(err)
	}
	fits(t, ctx, "the trace with the label form", phoneWidth)
	for _, id := range []string{"label-right", "label-wrong", "label-expected", "label-submit"} {
		if in, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const r = document.querySelector('[data-testid="`+id+`"]').getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= `+strconv.Itoa(phoneWidth)+`; })()`)); err != nil || !in {
			t.Errorf("at %d px the label form's %s is not in sight (%v)", phoneWidth, id, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/labels"), chromedp.WaitVisible(byTestID("label-queue-table"))); err != nil {
		t.Fatal(err)
	}
	if got := labelByKeyboard(t, ctx, p, status, "wrong", "order_support"); !strings.Contains(got, "Labelled wrong: it should have gone to order_support") {
		t.Errorf("after labelling wrong the trace says %q", got)
	}
	screenshot(ctx, "labels-trace-phone")

	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/labels"), chromedp.WaitVisible(byTestID("label-progress"))); err != nil {
		t.Fatal(err)
	}
	if got := queueItems(t, ctx); len(got) != 0 {
		t.Errorf("labelled journeys are still proposed: %v", got)
	}
	if got := textOf(t, ctx, byTestID("label-queue-empty")); !strings.Contains(got, "Nothing left to do") {
		t.Errorf("the emptied queue says %q", got)
	}
	fits(t, ctx, "the emptied Labelling", phoneWidth)

	err = chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/releases"),
		chromedp.WaitVisible(byTestID("route-accuracy-total")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, ctx, byTestID("route-accuracy-total")); !strings.HasPrefix(got, "50.0 % of 8 labelled journeys routed right (4).") {
		t.Errorf("after carol's labels the route accuracy reads %q, want 50.0 %% of 8 (4)", got)
	}
	wrong, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid="route-accuracy-confusion"] tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent.trim()).join(" → "))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(wrong) == 0 || wrong[0] != "order_status → order_support → 2" {
		t.Errorf("wrong routes %q, want order_status → order_support twice first", wrong)
	}
	line, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('[data-testid="route-accuracy-skill-order_support"] td')).map(c => c.textContent.trim()).join(" ")`))
	if err != nil {
		t.Fatal(err)
	}
	if got := line; got != "order_support 1 1 0 2" {
		t.Errorf("order_support's line reads %q, want routed 1, right 1, no false positive, 2 false negatives", got)
	}
	fits(t, ctx, "Releases with the route accuracy", phoneWidth)
	screenshot(ctx, "labels-releases-phone")
	p.stop(t)
}

// TestBrowserOwnersOnAPhone: on a 390 px phone, erin (admin) reads each
// list page's owners without scrolling sideways: the owner line sits
// under the row's name, in sight, and the page is no wider than the
// phone. The demo's refunds skill names group:payments; its tools,
// model deployments and tenant have none yet ("no owner").
func TestBrowserOwnersOnAPhone(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "erin")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 844)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ page, testid, want string }{
		{"/tools", "tool-owner-issue_refund", "no owner"},
		{"/skills", "skill-owner-refunds", "owner group:payments"},
		{"/skills", "skill-owner-order_status", "no owner"},
		{"/runbooks", "runbook-owner-bad-release-rollback", "platform-oncall"},
		{"/models", "model-owner-demo-model", "no owner"},
		{"/tenants", "tenant-owner-acme", "no owner"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+tt.page), chromedp.WaitVisible(byTestID(tt.testid))); err != nil {
			t.Fatalf("%s: %v\nwarden logs:\n%s", tt.page, err, p.logs)
		}
		if got := textOf(t, ctx, byTestID(tt.testid)); got != tt.want {
			t.Errorf("%s: %s reads %q, want %q", tt.page, tt.testid, got, tt.want)
		}
		in, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const r = document.querySelector('[data-testid="`+tt.testid+`"]').getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= `+strconv.Itoa(phoneWidth)+`; })()`))
		if err != nil || !in {
			t.Errorf("%s: at %d px the owner %s is not in sight without scrolling (%v)", tt.page, phoneWidth, tt.testid, err)
		}
		fits(t, ctx, tt.page, phoneWidth)
		attachScreenshot(t, ctx, "owners-phone"+strings.ReplaceAll(tt.page, "/", "-"))
	}
	p.stop(t)
}
