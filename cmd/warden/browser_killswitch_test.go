package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// runJourney sends an agent's journey over the API with the demo key and
// returns the status and error code.
func runJourney(t *testing.T, p *process, input string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"input": input})
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/journeys", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+p.demoKey(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Error.Code
}

// TestBrowserKillSwitchRefunds: carol, on call, opens Kill switches from
// the navigation and switches issue_refund off with a reason; the agent's
// refund journey is then refused with 403 tool_disabled. She switches it
// on again and refunds run.
func TestBrowserKillSwitchRefunds(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "carol")
	const refund = "Refund ORD-1002, the t-shirts arrived torn"
	const row = `[data-testid="switch-tool-issue_refund"]`

	err := chromedp.Do(ctx,
		chromedp.Click(css(`nav a[href="/switches"]`)),
		chromedp.WaitVisible(byTestID("switch-tools")),
	)
	if err != nil {
		t.Fatalf("open Kill switches from the navigation: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, css(row+` [data-testid="state"]`)); got != "on" {
		t.Fatalf("issue_refund is %q, want on", got)
	}
	screenshot(ctx, "kill-switches")

	err = chromedp.Do(ctx,
		chromedp.Click(css(row+` [data-testid="switch-off"]`)),
		chromedp.WaitVisible(byTestID("confirm-effect")),
	)
	if err != nil {
		t.Fatalf("ask to switch issue_refund off: %v", err)
	}
	if eff := textOf(t, ctx, byTestID("confirm-effect")); !strings.Contains(eff, "403 tool_disabled") {
		t.Errorf("the confirmation says %q, want what stops (403 tool_disabled)", eff)
	}
	screenshot(ctx, "kill-switch-confirm")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(css("#switch-reason"), "INC-42: provider pays refunds twice"),
		chromedp.Click(byTestID("confirm-switch-off")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("switch issue_refund off: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, css(row+` [data-testid="state"]`)); got != "off" {
		t.Fatalf("issue_refund is %q after switching off, want off", got)
	}
	if status, code := runJourney(t, p, refund); status != http.StatusForbidden || code != "tool_disabled" {
		t.Errorf("refund journey while off = %d %s, want 403 tool_disabled", status, code)
	}

	// Switching on loosens: the page says it needs a second admin, the
	// press lands on the pending change, and frank approves it.
	if got := textOf(t, ctx, css(row+` [data-testid="needs-second-admin"]`)); got != "needs a second admin" {
		t.Errorf("the switch-on button says %q beside it, want needs a second admin", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(css(row+` [data-testid="switch-on"]`)),
		chromedp.WaitVisible(byTestID("change-status")),
	)
	if err != nil {
		t.Fatalf("switch issue_refund on: %v", err)
	}
	if status, code := runJourney(t, p, refund); status != http.StatusForbidden || code != "tool_disabled" {
		t.Errorf("refund journey while the switch-on waits for a second admin = %d %s, want 403 tool_disabled", status, code)
	}
	approveChangeAsFrank(t, ctx, p)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/switches"), chromedp.WaitVisible(css(row+` [data-testid="switch-off"]`))); err != nil {
		t.Fatalf("issue_refund not on after frank approved: %v", err)
	}
	if got := textOf(t, ctx, css(row+` [data-testid="state"]`)); got != "on" {
		t.Errorf("issue_refund is %q after switching on, want on", got)
	}
	if status, code := runJourney(t, p, refund); status != http.StatusAccepted {
		t.Errorf("refund journey after switching on = %d %s, want 202", status, code)
	}
}
