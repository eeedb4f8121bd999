package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// proposeRefund asks for approval of a refund over the agents' API, as an
// agent would, and returns the new action's id.
func proposeRefund(t *testing.T, p *process, body string) (id string, required float64) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/actions", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+p.demoKey(t))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID                string  `json:"id"`
		ApprovalsRequired float64 `json:"approvals_required"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("propose = %d", resp.StatusCode)
	}
	return out.ID, out.ApprovalsRequired
}

// TestBrowserSplitRefundNeedsTwoApprovers: an agent splits a $2,400 refund
// of one order into three of $800. Alice finds the second in her queue: it
// needs two approvers, and its page says why. Then erin gives the tenant a
// KWD threshold on the tenant page.
func TestBrowserSplitRefundNeedsTwoApprovers(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	const refund = `{"tool":"issue_refund","summary":"Refund part of ORD-1008","arguments":{"order_id":"ORD-1008","amount_minor":80000,"currency":"USD","account":"BE66068210986343"}}`
	_, first := proposeRefund(t, p, refund)
	second, n := proposeRefund(t, p, refund)
	if first != 1 || n != 2 {
		t.Fatalf("approvals required = %v then %v, want 1 then 2", first, n)
	}

	signIn(t, ctx, p, "alice")
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/approvals"),
		chromedp.WaitVisible(byTestID("approval-"+second)),
		chromedp.Click(css(`[data-testid="approval-`+second+`"] a.queue-summary`)),
		chromedp.WaitVisible(byTestID("action-approval-basis")),
	)
	if err != nil {
		t.Fatalf("open the split refund from the queue: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("action-approval-basis")); !strings.Contains(got, "Cumulative $1,600.00 for ORD-1008 over 24 h") {
		t.Errorf("the action page says %q, want the cumulative amount on ORD-1008", got)
	}
	if got := textOf(t, ctx, byTestID("action-approvals")); got != "0 of 2" {
		t.Errorf("approvals = %q, want 0 of 2", got)
	}
	screenshot(ctx, "split-refund")
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatal(err)
	}

	signIn(t, ctx, p, "erin")
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/tenants"]`)),
		chromedp.WaitVisible(css(`a[href="/tenants/acme"]`)),
		chromedp.Click(css(`a[href="/tenants/acme"]`)),
		chromedp.WaitVisible(byTestID("tenant-dual-control-form")),
		chromedp.SetValue(css(`#dual_control_currency`), "KWD"),
		chromedp.SetValue(css(`#dual_control`), "500.000"),
		chromedp.Submit(css(`#dual_control`)),
		chromedp.WaitVisible(byTestID("change-status")),
	)
	if err != nil {
		t.Fatalf("set a KWD threshold: %v\nwarden logs:\n%s", err, p.logs)
	}
	// A threshold where KWD had none loosens dual control (none: two
	// approvers for any amount), so frank, a second admin, approves it.
	approveChangeAsFrank(t, ctx, p)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/tenants/acme"), chromedp.WaitVisible(byTestID("threshold-KWD"))); err != nil {
		t.Fatalf("the KWD threshold is not shown after approval: %v", err)
	}
	if got := textOf(t, ctx, byTestID("tenant-dual-control")); !strings.Contains(got, "$1,000.00") || !strings.Contains(got, "500.000 KWD") {
		t.Errorf("the tenant's thresholds read %q, want $1,000.00 and 500.000 KWD", got)
	}
	screenshot(ctx, "tenant-thresholds")
	p.stop(t)
}
