package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// postAction proposes an action over the agents' API with the demo key
// and returns the status, the new action's id, and the error's code and
// message when refused.
func postAction(t *testing.T, p *process, body string) (status int, id, code, message string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/actions", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+p.demoKey(t))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID    string `json:"id"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.ID, out.Error.Code, out.Error.Message
}

// TestBrowserRefundShowsWhatWasRefunded: the agent looks up ORD-1003
// ($899.00) and asks to refund $500.00 of it; alice approves it from her
// queue and it executes. The agent asks for $300.00 more: alice, opening
// it from the queue, reads "Already refunded $500.00 of $899.00 on
// ORD-1003." The agent's $500.00 more — beyond the $399.00 left — is
// refused with 400 exceeds_refundable and a sentence, over /v1/actions
// and as a journey. On the demo's $2,400 refund alice reads the order's
// items as a table with prices in dollars and the key by its name.
func TestBrowserRefundShowsWhatWasRefunded(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	refund := func(cents int) string {
		return fmt.Sprintf(`{"tool":"issue_refund","summary":"Refund part of ORD-1003","arguments":{"order_id":"ORD-1003","amount_minor":%d,"currency":"USD","account":"NL19ABNA0457218836"}}`, cents)
	}
	if status, code := runJourney(t, p, "Where is my order ORD-1003?"); status != http.StatusOK {
		t.Fatalf("the order-status journey = %d %s, want 200", status, code)
	}
	status, first, code, _ := postAction(t, p, refund(50_000))
	if status != http.StatusAccepted {
		t.Fatalf("propose $500.00 of ORD-1003 = %d %s, want 202", status, code)
	}

	signIn(t, ctx, p, "alice")
	openFromQueue := func(id string) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.Click(css(`nav a[href="/approvals"]`)),
			chromedp.WaitVisible(byTestID("approval-"+id)),
			chromedp.Click(css(`[data-testid="approval-`+id+`"] a.queue-summary`)),
			chromedp.WaitVisible(byTestID("action-summary")),
		)
		if err != nil {
			t.Fatalf("open %s from the queue: %v\nwarden logs:\n%s", id, err, p.logs)
		}
	}
	openFromQueue(first)
	if got := textOf(t, ctx, byTestID("already-refunded")); got != "Already refunded $0.00 of $899.00 on ORD-1003." {
		t.Errorf("the first refund's page says %q, want nothing refunded yet of $899.00", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("approve")), chromedp.WaitVisible(byTestID("notice"))); err != nil {
		t.Fatalf("alice approves: %v\nwarden logs:\n%s", err, p.logs)
	}
	waitActionStatus(t, ctx, p, "executed")

	status, second, code, _ := postAction(t, p, refund(30_000))
	if status != http.StatusAccepted {
		t.Fatalf("propose $300.00 more = %d %s, want 202 (it fits in the $399.00 left)", status, code)
	}
	openFromQueue(second)
	if got := textOf(t, ctx, byTestID("already-refunded")); got != "Already refunded $500.00 of $899.00 on ORD-1003." {
		t.Errorf("the second refund's page says %q, want the $500.00 already refunded of $899.00", got)
	}
	screenshot(ctx, "already-refunded")

	const want = "ORD-1003 has $399.00 left to refund: $500.00 of $899.00 was already refunded. This asks for $500.00."
	status, _, code, msg := postAction(t, p, refund(50_000))
	if status != http.StatusBadRequest || code != "exceeds_refundable" || msg != want {
		t.Errorf("propose $500.00 more = %d %s %q, want 400 exceeds_refundable %q", status, code, msg, want)
	}
	if status, code := runJourney(t, p, "refund $500.00 on ORD-1003"); status != http.StatusBadRequest || code != "exceeds_refundable" {
		t.Errorf("the refund journey of $500.00 more = %d %s, want 400 exceeds_refundable", status, code)
	}

	// The demo's $2,400 refund: no raw values.
	err := chromedp.Do(ctx,
		chromedp.Click(css(`nav a[href="/approvals"]`)),
		chromedp.WaitVisible(byTestID("approvals-table")),
	)
	if err != nil {
		t.Fatal(err)
	}
	openFirstInQueue(t, ctx, p, "?sort=amount")
	items := textOf(t, ctx, byTestID("step-result-2-table"))
	for _, s := range []string{"Standing desk", "$1,899.00", "Ergonomic chair", "$501.00", "unit price"} {
		if !strings.Contains(strings.ToLower(items), strings.ToLower(s)) {
			t.Errorf("the lookup's items %q lack %q", items, s)
		}
	}
	if fields := textOf(t, ctx, byTestID("step-result-2-fields")); !strings.Contains(fields, "Refunded") || strings.Contains(fields, "Refunded minor") || strings.Contains(fields, "unit_minor") {
		t.Errorf("the lookup's fields %q, want amounts as money, not minor units", fields)
	}
	if key := textOf(t, ctx, byTestID("action-key")); !strings.Contains(key, "demo key") {
		t.Errorf("virtual key %q, want its name", key)
	}
	if h := textOf(t, ctx, css("h1")); !strings.HasPrefix(h, "Refund $2,400.00") {
		t.Errorf("the page's heading is %q, want the action's summary", h)
	}
	screenshot(ctx, "action-items-table")
}
