package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestBrowserPhoneDetailTablesStack: the demo key asks the model-driven
// refund skill for a refund of ORD-1005 (the journey waits for approval
// after its model calls and steps) and alice approves it once with a
// long comment. On a 390 px phone the tables of the detail pages read
// one block per row like the lists do: the approval's decisions and the
// journey so far, the trace's steps, model calls and redactions, the
// alert thresholds (with erin's forms), the search results (actions,
// journeys, audit events) and the audit trail. Every cell lies whole in
// sight after its column's name, no card scrolls sideways, the page is
// no wider than the phone; so do erin's other pages with wide tables
// (keys, tools, models and their calls, budgets, sessions, tenants, a
// tenant's dual-control thresholds,
// switches, skills, runbooks, releases, dependencies). At 1366 px every
// one of them stays a table: header row shown, no column names in the
// cells. With WARDEN_TEST_POSTGRES set, the process keeps its data in
// PostgreSQL.
func TestBrowserPhoneDetailTablesStack(t *testing.T) {
	var env []string
	if storetest.Postgres() {
		env = append(env, "WARDEN_DATABASE_URL="+storetest.URL(t), "WARDEN_DB_MAX_CONNS=5")
	}
	p := startProcess(t, "", env...)
	body, _ := json.Marshal(map[string]string{"input": "model demo: refund ORD-1005, it arrived torn. Write to jane.doe@example.com", "skill": "model_refunds"})
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/journeys", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+p.demoKey(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var journey struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Action struct {
			ID string `json:"id"`
		} `json:"action"`
	}
	err = json.NewDecoder(resp.Body).Decode(&journey)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted || journey.Action.ID == "" {
		t.Fatalf("model-driven journey = %d %+v (%v), want 202 awaiting approval\nwarden logs:\n%s", resp.StatusCode, journey, err, p.logs)
	}

	ctx := newBrowserContext(t)
	signIn(t, ctx, p, "alice")
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1366, 900),
		chromedp.Navigate(p.URL+"/approvals/"+journey.Action.ID),
		chromedp.WaitVisible(byTestID("approve")),
		chromedp.SendKeys(css("#approve-comment"), "Photos of the torn box checked against order ORD-1005; the courier's damage report number is DMG-2026-000000000000481516"),
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("decisions")),
	)
	if err != nil {
		t.Fatalf("alice approves once: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	stacks(t, ctx, p, stackCase{"/approvals/" + journey.Action.ID, []string{"decisions", "journey-steps"}, []string{"Decision", "When", "Comment", "Step", "Kind", "Tool", "Arguments", "Result", "Status"}})

	signOutAndIn(t, ctx, p, "erin")
	trace := "/traces/" + journey.ID

	pages := []stackCase{
		{trace, []string{"trace-model-calls", "trace-tokens", "trace-steps"}, []string{"Call", "Deployment", "Tokens in/out", "Cost", "Kind", "Found by", "Where", "Step", "Tool", "Arguments", "Result", "Status", "Units", "Latency"}},
		{"/alerts#rules", []string{"alert-rules"}, []string{"Failure rate", "p99 latency", "Window", "Minimum journeys"}},
		{"/search?q=" + url.QueryEscape("ORD-1005"), []string{"search-actions", "search-events", "search-journeys"}, []string{"Asked", "Target", "Tenant", "Amount", "Started", "Skill", "Caller", "Seq", "Time"}},
		{"/audit", []string{"audit-table"}, []string{"Seq", "Time", "Tenant"}},
		// The admin's and on-call's other pages whose tables had more
		// columns than a phone shows.
		{"/keys", []string{"keys-table"}, []string{"Tenant", "Prefix", "Scopes", "Created", "Last used", "Expires", "State"}},
		{"/tools", []string{"tools-table"}, []string{"Impact", "Reversibility", "Provider", "Timeout", "Attempts", "Unit cost", "Switch"}},
		{"/models", []string{"models-table", "model-calls"}, []string{"Priority / weight", "Deployment", "Upstream", "Context / cap", "Concurrency", "Tenant", "Alias", "Attempts", "Usage", "Charged", "Prompt (redacted)"}},
		{"/budgets", []string{"budget-top-acme"}, []string{"Skill", "Status", "Cost", "Started"}},
		{"/sessions", []string{"sessions-table"}, []string{"Signed in", "Last seen", "From", "Ends at the latest"}},
		{"/tenants", []string{"tenants-table"}, []string{"Name", "State", "Trace retention", "Created"}},
		{"/tenants/acme", []string{"tenant-thresholds"}, []string{"Two approvers from"}},
		{"/switches", []string{"switch-tools", "switch-skills"}, []string{"Impact", "State", "Switch", "Tools it calls"}},
		{"/skills", []string{"skills"}, []string{"Description", "Tools", "Max steps", "Model", "Source", "SHA-256"}},
		{"/runbooks", []string{"runbooks"}, []string{"Owner", "Severity", "Alerts"}},
		{"/releases", []string{"release-history"}, []string{"Change", "By", "When"}},
		{"/dependencies", []string{"deps"}, []string{"Breaker", "Error rate (window)", "Latency p50 / p99", "Calls"}},
	}
	for _, tc := range pages {
		stacks(t, ctx, p, tc)
	}
	// The row's link leads its block, though its column comes later on a
	// wide screen.
	for _, tc := range []struct{ page, table, link string }{
		{"/search?q=ORD-1005", "search-journeys", `a[data-testid="journey-link"]`},
		{trace, "trace-model-calls", `code`},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+tc.page), chromedp.WaitVisible(byTestID(tc.table))); err != nil {
			t.Fatalf("open %s: %v", tc.page, err)
		}
		linkLeads(t, ctx, tc.table, tc.link)
	}
	// Back on a wide screen every one of them is a table again.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+tc.page), chromedp.WaitVisible(byTestID(tc.tables[len(tc.tables)-1]))); err != nil {
			t.Fatalf("open %s at 1366 px: %v", tc.page, err)
		}
		for _, table := range tc.tables {
			if !visible(t, ctx, css(`[data-testid="`+table+`"] thead th:last-child`)) {
				t.Errorf("%s at 1366 px: the %s table's header row does not show", tc.page, table)
			}
			for _, c := range phoneCells(t, ctx, table) {
				if c.Label != "" {
					t.Errorf("%s at 1366 px: %s's cell %q shows its column's name %q", tc.page, table, c.Text, c.Label)
					break
				}
			}
		}
	}
	p.stop(t)
}
