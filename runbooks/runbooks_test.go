package runbooks

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tools"
)

const valid = `---
id: disk-full
title: Disk full
owner: storage-oncall
severity: low
alerts: [p99_latency]
actions:
  - id: stop-refunds
    label: Switch off issue_refund
    description: stops refunds
    tool: switch_tool
    args: {name: issue_refund, state: "off"}
---
# Disk full

Free some space.
`

func TestParseFrontMatter(t *testing.T) {
	rb, err := Parse([]byte(valid))
	if err != nil {
		t.Fatalf("Parse(valid) = %v", err)
	}
	want := Runbook{ID: "disk-full", Title: "Disk full", Owner: "storage-oncall", Severity: "low", Alerts: []string{"p99_latency"},
		Actions: []Action{{ID: "stop-refunds", Label: "Switch off issue_refund", Description: "stops refunds", Tool: ToolSwitchTool,
			Args: map[string]string{"name": "issue_refund", "state": "off"}}}}
	got := rb
	got.HTML = ""
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("Parse(valid) = %s, want %s", gj, wj)
	}
	if !strings.Contains(rb.HTML, "<h2>Disk full</h2>") || strings.Contains(rb.HTML, "owner:") {
		t.Errorf("HTML = %q, want the body rendered without the front matter", rb.HTML)
	}
}

func TestParseRefusesBadDocuments(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no front matter", "# Hello\n", "no front matter"},
		{"broken yaml", "---\nid: [unclosed\n---\n", "front matter"},
		{"bad severity", strings.Replace(valid, "severity: low", "severity: meh", 1), `severity "meh"`},
		{"unknown tool", strings.Replace(valid, "tool: switch_tool", "tool: delete_everything", 1), `tool "delete_everything"`},
		{"missing argument", strings.Replace(valid, `args: {name: issue_refund, state: "off"}`, `args: {state: "off"}`, 1), `argument "name"`},
		{"bad state", strings.Replace(valid, `state: "off"`, `state: "maybe"`, 1), `state "maybe"`},
		{"no title", strings.Replace(valid, "title: Disk full", "", 1), "title is missing"},
		{"alert kind that does not exist", strings.Replace(valid, "alerts: [p99_latency]", "alerts: [tool-error-rate]", 1), `alerts: "tool-error-rate" is not a kind of alert`},
		{"unknown cause", strings.Replace(valid, "alerts: [p99_latency]", "alerts: [p99_latency]\ncauses: [gremlins]", 1), `causes: "gremlins"`},
		{"cause without alerts", strings.Replace(valid, "alerts: [p99_latency]", "causes: [agent]", 1), "must name them"},
		{"unknown parameter", strings.Replace(valid, "name: issue_refund", "name: $tol", 1), `"$tol" names no parameter`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestLoadDefaultsAndDirectory(t *testing.T) {
	set, problems := Load(nil)
	if len(problems) != 0 {
		t.Fatalf("defaults: %v", problems)
	}
	var ids []string
	for _, rb := range set.All() {
		ids = append(ids, rb.ID)
	}
	slices.Sort(ids)
	want := []string{"agent-requests-failing", "bad-release-rollback", "mcp-server-misbehaving", "pii-in-traces", "runaway-spend",
		"slow-journeys", "stuck-effects", "tool-provider-outage"}
	if !slices.Equal(ids, want) {
		t.Errorf("default runbooks = %q, want %q", ids, want)
	}
	if rb, _ := set.Get("bad-release-rollback"); rb.Title != "Bad release: roll back" {
		t.Errorf("bad-release-rollback title = %q", rb.Title)
	}

	dir := fstest.MapFS{
		"disk-full.md": {Data: []byte(valid)},
		"broken.md":    {Data: []byte("---\nid: broken\ntitle: Broken\nowner: x\nseverity: nope\n---\n")},
		"notes.txt":    {Data: []byte("not a runbook")},
	}
	set, problems = Load(dir)
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "broken.md") || !strings.Contains(problems[0].Error(), `severity "nope"`) {
		t.Errorf("problems = %v, want one naming broken.md and its severity", problems)
	}
	if _, ok := set.Get("disk-full"); !ok {
		t.Error("disk-full did not load beside the broken file")
	}
	if len(set.All()) != 9 {
		t.Errorf("loaded %d runbooks, want the 8 defaults and disk-full", len(set.All()))
	}
}

func TestRawHTMLIsShownAsText(t *testing.T) {
	src := strings.Replace(valid, "Free some space.", "Free <b>some</b> space.\n\n<script>alert(1)</script>\n\n[x](javascript:alert(2))", 1)
	rb, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<b>", "javascript:"} {
		if strings.Contains(rb.HTML, bad) {
			t.Errorf("HTML = %q, holds %q", rb.HTML, bad)
		}
	}
	for _, shown := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;some&lt;/b&gt;"} {
		if !strings.Contains(rb.HTML, shown) {
			t.Errorf("HTML = %q, want %q shown as text", rb.HTML, shown)
		}
	}
}

var carol = &identity.Principal{ID: "p-carol", Name: "Carol", Roles: []string{identity.RoleOncall}, Tenants: []string{identity.AllTenants}}

func setup(t *testing.T) (Deps, context.Context) {
	t.Helper()
	d, ctx := setupUnpublished(t)
	d.Runbooks = loadPublished(t, ctx, d.DB, fstest.MapFS{"disk-full.md": {Data: []byte(valid)}})
	return d, ctx
}

// setupUnpublished is a store with the tool issue_refund (on) and no
// runbooks: nothing published.
func setupUnpublished(t *testing.T) (Deps, context.Context) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	refund := tools.Tool{Name: "issue_refund", Description: "Refund", Impact: risk.ImpactLow, Reversibility: risk.Reversible,
		Provider: tools.ProviderBuiltin, Timeout: 2 * time.Second, MaxAttempts: 3, ApprovalTTL: time.Hour,
		ArgsSchema: json.RawMessage(`{"type":"object"}`), Enabled: true}
	if err := db.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, refund) }); err != nil {
		t.Fatal(err)
	}
	return Deps{DB: db}, ctx
}

func runbookEvents(t *testing.T, db *store.DB) (runbook, tool int) {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		switch ev.Verb {
		case "runbook.action":
			runbook++
		case "tool.disable", "tool.enable":
			tool++
		}
	}
	return runbook, tool
}

func TestRunTwiceWithOneTokenRunsOnce(t *testing.T) {
	d, ctx := setup(t)
	var wg sync.WaitGroup
	runs := make([]RunRecord, 4)
	errs := make([]error, 4)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = Run(ctx, d, carol, "disk-full", "stop-refunds", "provider down", "token-1")
		}()
	}
	wg.Wait()
	for i := range runs {
		if errs[i] != nil || runs[i].ID != runs[0].ID {
			t.Fatalf("press %d = %+v, %v; want the one run %s", i, runs[i], errs[i], runs[0].ID)
		}
	}
	// A retry after the first finished returns the same run too.
	again, err := Run(ctx, d, carol, "disk-full", "stop-refunds", "provider down", "token-1")
	if err != nil || again.ID != runs[0].ID || again.Status != StatusDone || again.AuditSeq == 0 {
		t.Fatalf("retry = %+v, %v; want the finished run %s", again, err, runs[0].ID)
	}
	tool, err := catalog.Get(ctx, d.DB.Read(), "issue_refund")
	if err != nil || tool.Enabled {
		t.Errorf("issue_refund enabled = %v (%v), want off", tool.Enabled, err)
	}
	if rb, tl := runbookEvents(t, d.DB); rb != 1 || tl != 1 {
		t.Errorf("events: %d runbook.action, %d tool switch; want 1 and 1", rb, tl)
	}
	page, _ := store.ParsePage("", "", 10)
	hist, err := Runs(ctx, d.DB.Read(), "disk-full", page)
	if err != nil || len(hist.Rows) != 1 || hist.Rows[0].Reason != "provider down" || hist.Rows[0].PrincipalName != "Carol" {
		t.Errorf("history = %+v, %v; want the one run with its reason and who", hist.Rows, err)
	}
	// The same token for another action is refused.
	if _, err := Run(ctx, d, carol, "mcp-server-misbehaving", "switch-on-shop", "x", "token-1"); httpStatus(err) != 409 {
		t.Errorf("token reused for another action: %v, want 409", err)
	}
}

func httpStatus(err error) int {
	var p *problem.Error
	if errors.As(err, &p) {
		return p.Status()
	}
	return 0
}

func TestRunRefusals(t *testing.T) {
	d, ctx := setup(t)
	alice := &identity.Principal{ID: "p-alice", Roles: []string{identity.RoleApprover}, Tenants: []string{identity.AllTenants}}
	scoped := &identity.Principal{ID: "p-sam", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	for _, tc := range []struct {
		name      string
		p         *identity.Principal
		reason    string
		status    int
		runbookID string
	}{
		{"approver", alice, "x", 403, "disk-full"},
		{"no reason", carol, "  ", 422, "disk-full"},
		{"too long a reason", carol, strings.Repeat("x", MaxReason+1), 422, "disk-full"},
		{"every-tenant tool, one-tenant scope", scoped, "x", 403, "disk-full"},
		{"unknown runbook", carol, "x", 404, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(ctx, d, tc.p, tc.runbookID, "stop-refunds", tc.reason, "tok-"+tc.name)
			if httpStatus(err) != tc.status {
				t.Errorf("Run = %v, want %d", err, tc.status)
			}
		})
	}
	tool, _ := catalog.Get(ctx, d.DB.Read(), "issue_refund")
	if rb, tl := runbookEvents(t, d.DB); !tool.Enabled || rb != 0 || tl != 0 {
		t.Errorf("after refusals: enabled %v, %d runbook events, %d tool events; want nothing changed", tool.Enabled, rb, tl)
	}
}
