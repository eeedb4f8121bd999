package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
	"github.com/wardenhq/warden/web/browsertest"
)

// drillBrowser is a Chromium of the test's own at a laptop's size.
func drillBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Context(t, chromedp.WindowSize(1366, 900))
}

// drillSignIn signs in through the development provider's picker by
// clicking, as a person does.
func drillSignIn(t *testing.T, ctx context.Context, in *instance, user string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(in.URL+"/"),
		chromedp.WaitVisible(testID("login-button")),
		chromedp.Click(testID("login-button")),
		chromedp.WaitVisible(testID("devidp-user-"+user)),
		chromedp.Click(testID("devidp-user-"+user)),
		chromedp.WaitVisible(testID("whoami")),
	)
	if err != nil {
		t.Fatalf("sign in as %s: %v\nlogs:\n%s", user, err, in.Logs)
	}
}

func drillText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func drillCount(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// drillKey creates an agent key of tenant for order_status, as erin (so
// the alert can name its owner), and returns its secret.
func drillKey(t *testing.T, in *instance, tenantID, name string) string {
	t.Helper()
	ctx := context.Background()
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	var erinID string
	if err := in.DB.Read().QueryRow(`SELECT id FROM principals WHERE subject = 'dev-erin'`).Scan(&erinID); err != nil {
		t.Fatal(err)
	}
	_, secrets, err := keys.CreateAudited(ctx, in.DB, in.Agent.Journeys.Sealer(), audit.Actor{Type: audit.ActorPrincipal, ID: erinID}, keys.NewSpec{
		TenantID: tenantID, Name: name, Scopes: []string{"skill:order_status", "tool:lookup_order"}, RatePerMin: 6000, Burst: 200, CreatedBy: erinID})
	if err != nil {
		t.Fatal(err)
	}
	return secrets.Key
}

// TestBrowserAlertDrillAgentRequests is the drill of issue 26: an agent
// sends eight good requests and fourteen without an order id (422
// incomplete_request), so the order_status failure-rate alert fires.
// Carol (on-call) opens it from her home page by clicking, reads its
// cause — incomplete_request, the agent's requests — and the key that
// sent them with its owner, follows the link to exactly the failing
// journeys, and finds the validation runbook proposed, with no button
// that stops anything. She acknowledges the alert from the browser. On a
// phone, the Alerts list shows it as one block, each cell named.
func TestBrowserAlertDrillAgentRequests(t *testing.T) {
	ctx := drillBrowser(t)
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	acme, err := tenants.BySlug(context.Background(), in.DB.Read(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	secret := drillKey(t, in, acme.ID, "shop assistant")
	for range 8 {
		if r := journey(t, in, secret, "Where is my order ORD-1003?", nil); r.Status != http.StatusOK {
			t.Fatalf("good request = %d %s", r.Status, r.Raw)
		}
	}
	for range 14 {
		if r := journey(t, in, secret, "where is my order", nil); r.Status != http.StatusUnprocessableEntity || r.code() != "incomplete_request" {
			t.Fatalf("request without an order id = %d %s, want 422 incomplete_request", r.Status, r.Raw)
		}
	}
	if _, err := alerts.Evaluate(context.Background(), in.DB, time.Now()); err != nil {
		t.Fatal(err)
	}

	drillSignIn(t, ctx, in, "carol")
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(testID("home-alert-failure_rate-order_status")),
		chromedp.Click(`[data-testid="home-alert-failure_rate-order_status"] [data-testid="home-alert-link"]`),
		chromedp.WaitVisible(testID("alert-cause")),
	)
	if err != nil {
		t.Fatalf("open the alert from the home page: %v\nlogs:\n%s", err, in.Logs)
	}
	if got := drillText(t, ctx, testID("alert-title")); got != "Failure rate of skill order_status" {
		t.Errorf("alert title = %q", got)
	}
	if got := drillText(t, ctx, `[data-testid="alert-code-incomplete_request"] [data-testid="alert-code-count"]`); got != "14" {
		t.Errorf("incomplete_request count = %q, want 14", got)
	}
	if got := drillText(t, ctx, `[data-testid="alert-code-incomplete_request"] [data-testid="alert-code-sentence"]`); !strings.Contains(got, "missing a required field, such as the order id") {
		t.Errorf("incomplete_request sentence = %q", got)
	}
	if got := drillText(t, ctx, testID("alert-fault")); !strings.Contains(got, "the agent's requests") || !strings.Contains(got, "14 of 28 journeys") {
		t.Errorf("fault = %q, want the agent's requests, 14 of 28 (8 good, 14 bad and the 6 order lookups of the demo)", got)
	}
	if got := drillText(t, ctx, testID("alert-key-name")) + " / " + drillText(t, ctx, testID("alert-key-owner")); got != "shop assistant / Erin Admin" {
		t.Errorf("key and owner = %q, want shop assistant / Erin Admin", got)
	}
	if got := drillText(t, ctx, testID("alert-runbook")); got != "Agent requests failing validation" {
		t.Errorf("proposed runbook = %q, want the validation runbook", got)
	}
	if n := drillCount(t, ctx, `[data-testid="alert-no-buttons"]`); n != 1 {
		t.Error("the alert page does not say the runbook has no button")
	}

	alertURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	// The failing journeys: exactly the fourteen.
	err = chromedp.Do(ctx,
		chromedp.Click(testID("alert-journeys")),
		chromedp.WaitVisible(testID("traces-table")),
	)
	if err != nil {
		t.Fatalf("open the failing journeys: %v", err)
	}
	if n := drillCount(t, ctx, `[data-testid="traces-table"] tbody tr`); n != 14 {
		t.Errorf("failing journeys listed = %d, want 14", n)
	}
	if n := drillCount(t, ctx, `[data-testid="traces-table"] [data-status="completed"]`); n != 0 {
		t.Errorf("%d completed journeys among the failing ones", n)
	}
	if got := drillText(t, ctx, `[data-testid="traces-table"] tbody tr code`); got != "incomplete_request" {
		t.Errorf("first failing journey's code = %q", got)
	}

	// Back to the alert, on to its runbook: no button that stops service.
	err = chromedp.Do(ctx,
		chromedp.Navigate(alertURL), // the browser's Back
		chromedp.WaitVisible(testID("alert-cause")),
		chromedp.Click(testID("alert-runbook")),
		chromedp.WaitVisible(testID("runbook-doc")),
	)
	if err != nil {
		t.Fatalf("open the runbook from the alert: %v", err)
	}
	if got := drillText(t, ctx, testID("runbook-title")); got != "Agent requests failing validation" {
		t.Errorf("runbook = %q", got)
	}
	if n := drillCount(t, ctx, `a.btn-danger, [data-testid^="action-"]`); n != 0 {
		t.Errorf("the validation runbook offers %d buttons, want none", n)
	}
	if got := drillText(t, ctx, testID("runbook-alert-key")) + " / " + drillText(t, ctx, testID("runbook-alert-key-owner")); got != "shop assistant / Erin Admin" {
		t.Errorf("runbook names key and owner %q", got)
	}
	if doc := drillText(t, ctx, testID("runbook-doc")); !strings.Contains(doc, "contact the agent's owner") || !strings.Contains(doc, "Do not switch anything off") {
		t.Errorf("runbook document = %q", doc)
	}

	// Acknowledge from the browser.
	err = chromedp.Do(ctx,
		chromedp.Click(testID("runbook-alert-link")),
		chromedp.WaitVisible(testID("alert-ack-form")),
		chromedp.SendKeys(testID("alert-ack-note-input"), "mailed the shop assistant's owner"),
		chromedp.Click(testID("alert-ack-submit")),
		chromedp.WaitVisible(testID("alert-ack-note")),
	)
	if err != nil {
		t.Fatalf("acknowledge: %v\nlogs:\n%s", err, in.Logs)
	}
	if got := drillText(t, ctx, testID("alert-acked")); !strings.Contains(got, "Carol On-call") || !strings.Contains(got, "mailed the shop assistant's owner") {
		t.Errorf("acknowledged = %q", got)
	}
	if evs := adminEvents(t, in.DB, "alert.acknowledged"); len(evs) != 1 {
		t.Errorf("%d alert.acknowledged events, want 1", len(evs))
	}
	if on, _ := catalog.SkillEnabled(context.Background(), in.DB.Read(), "order_status"); !on {
		t.Error("order_status was switched off")
	}

	// On a 390 px phone the firing alert reads as one block: its link
	// first, then each cell after its column's name, all in sight.
	err = chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(in.URL+"/alerts"), chromedp.WaitVisible(testID("alerts-firing")))
	if err != nil {
		t.Fatalf("open the alerts on a phone: %v", err)
	}
	type cell struct {
		Label, Text       string
		Left, Right, Room float64
	}
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]cell](`Array.from(document.querySelectorAll('[data-testid="alerts-firing"] tbody tr:first-child td')).map(td => {
		const r = td.getBoundingClientRect(), c = getComputedStyle(td, '::before').content;
		return {Label: (c && c !== 'none' && c !== 'normal') ? JSON.parse(c) : '', Text: td.textContent.trim().slice(0, 40), Left: r.left, Right: r.right, Room: parseFloat(getComputedStyle(td).paddingLeft)};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, c := range cells {
		if c.Left < 0 || c.Right > 390 {
			t.Errorf("at 390 px the alert's cell %q (%s) lies out of sight: left %.0f, right %.0f", c.Text, c.Label, c.Left, c.Right)
		}
		if c.Label != "" && c.Room < 100 {
			t.Errorf("at 390 px the alert's cell %q leaves %.0f px for its name %q", c.Text, c.Room, c.Label)
		}
		if i > 0 && c.Left > cells[0].Left+200 {
			t.Errorf("at 390 px the alert's cell %q sits beside the first, not under it", c.Text)
		}
		names = append(names, c.Label)
	}
	if got := strings.Join(names, ","); got != ",Value,Why,Since,Owner,Acknowledged,Runbook" {
		t.Errorf("at 390 px the alert's cells are named %q, want its link then Value, Why, Since, Owner, Acknowledged, Runbook", got)
	}
}

// TestBrowserAlertDrillProviderFailure: lookup_order's provider goes down
// while acme's agent calls it, so the order_status alert fires with
// Warden's side to blame. Carol opens it from her home page; the provider
// runbook is proposed with its switch filled for lookup_order and tenant
// acme; she switches it off with a reason. acme's calls of lookup_order
// are refused (403 tool_disabled) while globex's still run, and the tool
// is on in the catalog for every other tenant.
func TestBrowserAlertDrillProviderFailure(t *testing.T) {
	ctx := drillBrowser(t)
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	bg := context.Background()
	var globex tenants.Tenant
	err := in.DB.Transact(bg, func(tx *store.Tx) (err error) {
		if globex, err = tenants.Insert(bg, tx, "globex", "Globex"); err != nil {
			return err
		}
		return budgets.Set(bg, tx, budgets.Spec{TenantID: globex.ID, Period: budgets.Month, LimitMicros: 100_000_000, AlertPercent: 80}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Agent.Sim.AddOrders(bg, "globex", sim.DemoOrders()[2]); err != nil {
		t.Fatal(err)
	}
	globexKey := drillKey(t, in, globex.ID, "globex agent")

	in.Faults.Set("lookup_order", tools.Fault{Mode: tools.FaultDown})
	for range 25 {
		if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.Status < 500 && r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("request while the provider is down = %d %s", r.Status, r.Raw)
		}
	}
	if _, err := alerts.Evaluate(bg, in.DB, time.Now()); err != nil {
		t.Fatal(err)
	}
	in.Faults.Clear()

	drillSignIn(t, ctx, in, "carol")
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(testID("home-alert-failure_rate-order_status")),
		chromedp.Click(`[data-testid="home-alert-failure_rate-order_status"] [data-testid="home-alert-link"]`),
		chromedp.WaitVisible(testID("alert-cause")),
	)
	if err != nil {
		t.Fatalf("open the alert from the home page: %v\nlogs:\n%s", err, in.Logs)
	}
	if got := drillText(t, ctx, testID("alert-fault")); !strings.Contains(got, "Warden or a dependency") {
		t.Errorf("fault = %q, want Warden or a dependency", got)
	}
	if got := drillText(t, ctx, testID("alert-tools")); !strings.Contains(got, "lookup_order") {
		t.Errorf("failing tools = %q", got)
	}
	if got := drillText(t, ctx, testID("alert-proposed-switch-off-tool")); got != "Switch off lookup_order for tenant acme" {
		t.Errorf("proposed switch = %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(testID("alert-runbook")),
		chromedp.WaitVisible(testID("action-switch-off-tool")),
	)
	if err != nil {
		t.Fatalf("open the runbook: %v", err)
	}
	if got := drillText(t, ctx, testID("action-switch-off-tool")); got != "Switch off lookup_order for tenant acme" {
		t.Errorf("runbook button = %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(testID("action-switch-off-tool")),
		chromedp.WaitVisible(testID("runbook-submit")),
	)
	if err != nil {
		t.Fatalf("press the switch: %v", err)
	}
	if body := drillText(t, ctx, "main"); !strings.Contains(body, "off for tenant acme only") || !strings.Contains(body, "every other tenant keeps it") {
		t.Errorf("confirmation = %q, want it to say acme only", body)
	}
	// No reason: refused, nothing changes.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('reason').removeAttribute('required'), true`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(testID("runbook-submit")),
		chromedp.WaitVisible(`#reason-error, .field-invalid`),
	)
	if err != nil {
		t.Fatalf("submit without a reason: %v", err)
	}
	if off, _ := catalog.OffForTenant(bg, in.DB.Read(), "lookup_order", tenantID(t, in, "acme")); off {
		t.Fatal("a press without a reason switched the tool off")
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(testID("runbook-reason"), "provider down for acme"),
		chromedp.Click(testID("runbook-submit")),
		chromedp.WaitVisible(testID("runbook-result")),
	)
	if err != nil {
		t.Fatalf("confirm: %v\nlogs:\n%s", err, in.Logs)
	}
	if got := drillText(t, ctx, testID("run-outcome")); !strings.Contains(got, "lookup_order off for tenant acme") {
		t.Errorf("outcome = %q", got)
	}

	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.Status != http.StatusForbidden || r.code() != "tool_disabled" {
		t.Errorf("acme's call after the switch = %d %s, want 403 tool_disabled", r.Status, r.Raw)
	}
	// globex's calls go on: once the breaker the outage opened lets a
	// probe through (10 s), they complete.
	var r apiResp
	completed := wait.ForEvery(20*time.Second, 500*time.Millisecond, func() bool {
		r = journey(t, in, globexKey, "Where is my order ORD-1003?", nil)
		return r.Status == http.StatusOK && r.str("status") == "completed" || r.code() != "dependency_unavailable"
	})
	if !completed || r.Status != http.StatusOK || r.str("status") != "completed" {
		t.Errorf("globex's call after acme's switch = %d %s, want completed", r.Status, r.Raw)
	}
	if tl, _ := catalog.Get(bg, in.DB.Read(), "lookup_order"); !tl.Enabled {
		t.Error("lookup_order was switched off for every tenant")
	}
	// Carol's home says what is off, and for whom.
	err = chromedp.Do(ctx,
		chromedp.Navigate(in.URL+"/"),
		chromedp.WaitVisible(testID("home-off-tool-lookup_order-acme")),
	)
	if err != nil {
		t.Errorf("home does not list lookup_order off for acme: %v", err)
	}
	// Kill switches lists it, and switches it back on for acme.
	err = chromedp.Do(ctx,
		chromedp.Click(`nav a[href="/switches"]`),
		chromedp.WaitVisible(testID("switch-tenant-tool-lookup_order-acme")),
		chromedp.Click(testID("switch-tenant-on-lookup_order-acme")),
		chromedp.WaitVisible(testID("notice")),
	)
	if err != nil {
		t.Fatalf("switch lookup_order back on for acme: %v", err)
	}
	// Switching on loosens: it waits for a second admin, frank.
	if got := drillText(t, ctx, testID("notice")); !strings.Contains(got, "waits for a second admin") {
		t.Errorf("notice = %q", got)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(loc)
	approveChangeAt(t, in, u.Path)
	if err := chromedp.Do(ctx, chromedp.Navigate(in.URL+"/switches"), chromedp.WaitVisible(testID("switch-tools"))); err != nil {
		t.Fatal(err)
	}
	if off, _ := catalog.OffForTenant(bg, in.DB.Read(), "lookup_order", tenantID(t, in, "acme")); off {
		t.Error("lookup_order is still off for acme")
	}
	if n := drillCount(t, ctx, `[data-testid="switch-tenant-tools"]`); n != 0 {
		t.Error("Kill switches still lists a tool off for one tenant")
	}
}

func tenantID(t *testing.T, in *instance, slug string) string {
	t.Helper()
	tn, err := tenants.BySlug(context.Background(), in.DB.Read(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return tn.ID
}
