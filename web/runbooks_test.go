package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

func runbookRunCount(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(`SELECT COUNT(*) FROM runbook_runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// confirmToken opens an action's confirmation page and returns its
// one-time token.
func confirmToken(t *testing.T, b *browser, path string) string {
	t.Helper()
	p := b.get(path)
	tok, _ := p.Doc.Find(`input[name="token"]`).Attr("value")
	if p.Status != http.StatusOK || tok == "" {
		t.Fatalf("GET %s = %d, token %q", path, p.Status, tok)
	}
	return tok
}

func TestRunbookPagesOnlyForOncallAndAdmins(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	for _, tc := range []struct {
		user   string
		status int
	}{{"carol", http.StatusOK}, {"erin", http.StatusOK}, {"alice", http.StatusForbidden}, {"dave", http.StatusForbidden}} {
		b := newBrowser(t, in.URL)
		b.loginDev(tc.user)
		if got := b.get("/").Doc.Find(`nav a[href="/runbooks"]`).Length() == 1; got != (tc.status == http.StatusOK) {
			t.Errorf("%s: navigation offers Runbooks = %v", tc.user, got)
		}
		for _, path := range []string{"/runbooks", "/runbooks/tool-provider-outage", "/runbooks/pii-in-traces/actions/switch-off-refunds"} {
			if p := b.get(path); p.Status != tc.status {
				t.Errorf("%s: GET %s = %d, want %d", tc.user, path, p.Status, tc.status)
			}
		}
		if tc.status == http.StatusForbidden {
			before := auditCount(t, in.DB)
			p := b.post("/runbooks/pii-in-traces/actions/switch-off-refunds",
				b.withCSRF(url.Values{"reason": {"trying"}, "token": {"t-" + tc.user}}), nil)
			if p.Status != http.StatusForbidden || auditCount(t, in.DB) != before || runbookRunCount(t, in.DB) != 0 {
				t.Errorf("%s: POST = %d, and something was recorded", tc.user, p.Status)
			}
		}
	}
}

func TestRunbookIndexAndDocument(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	idx := b.get("/runbooks")
	for _, id := range []string{"bad-release-rollback", "runaway-spend", "tool-provider-outage", "stuck-effects", "pii-in-traces", "mcp-server-misbehaving"} {
		if idx.Doc.Find(`[data-testid="runbook-`+id+`"]`).Length() != 1 {
			t.Errorf("index lacks runbook %s", id)
		}
	}
	row := strings.Join(idx.Doc.Find(`[data-testid="runbook-runaway-spend"] td`).Map(func(_ int, s *goquery.Selection) string {
		return strings.TrimSpace(s.Text())
	}), " | ")
	if row != "Runaway spend | finance-oncall | high | budget_burn, model_overrun" {
		t.Errorf("runaway-spend row = %q", row)
	}
	doc := b.get("/runbooks/runaway-spend")
	// The title is the page's heading, once: the document's own first
	// heading repeated it.
	if doc.Doc.Find(`h1`).Text() != "Runaway spend" || !strings.Contains(doc.Doc.Find(`[data-testid="runbook-doc"]`).Text(), "Budgets") ||
		doc.Doc.Find(`[data-testid="action-freeze-tenant-unfilled"]`).Length() != 1 {
		t.Errorf("runbook page lacks its document or its button:\n%s", doc.Body)
	}
	if p := b.get("/runbooks/nope"); p.Status != http.StatusNotFound {
		t.Errorf("unknown runbook = %d, want 404", p.Status)
	}
}

func TestRunbookActionNeedsAReason(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	path := "/runbooks/pii-in-traces/actions/switch-off-refunds"
	tok := confirmToken(t, b, path)
	before := auditCount(t, in.DB)
	p := b.post(path, b.withCSRF(url.Values{"reason": {"  "}, "token": {tok}}), nil)
	if p.Status != http.StatusUnprocessableEntity || p.Doc.Find(`#reason-error, .field-invalid`).Length() == 0 {
		t.Errorf("no reason = %d, want 422 with a field error:\n%s", p.Status, p.Body)
	}
	if got, _ := p.Doc.Find(`input[name="token"]`).Attr("value"); got != tok {
		t.Errorf("the form came back with token %q, want the same %q", got, tok)
	}
	on, _ := catalog.SkillEnabled(context.Background(), in.DB.Read(), "refunds")
	if !on || auditCount(t, in.DB) != before || runbookRunCount(t, in.DB) != 0 {
		t.Errorf("after a refused press: skill on %v, events +%d, runs %d; want nothing changed",
			on, auditCount(t, in.DB)-before, runbookRunCount(t, in.DB))
	}
}

func TestRunbookDoubleSubmitRunsOnce(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	path := "/runbooks/pii-in-traces/actions/switch-off-refunds"
	tok := confirmToken(t, b, path)
	form := b.withCSRF(url.Values{"reason": {"provider is down"}, "token": {tok}})
	first := b.noRedirect().post(path, form, nil)
	second := b.noRedirect().post(path, form, nil)
	loc := first.Header.Get("Location")
	if first.Status != http.StatusSeeOther || second.Status != http.StatusSeeOther || loc == "" || second.Header.Get("Location") != loc {
		t.Fatalf("two submits = %d %q and %d %q; want 303 to the same run", first.Status, loc, second.Status, second.Header.Get("Location"))
	}
	on, _ := catalog.SkillEnabled(context.Background(), in.DB.Read(), "refunds")
	if on || runbookRunCount(t, in.DB) != 1 || len(adminEvents(t, in.DB, "runbook.action")) != 1 || len(adminEvents(t, in.DB, "skill.disabled")) != 1 {
		t.Errorf("after two submits: skill on %v, %d runs, %d runbook.action, %d skill.disabled; want off, 1, 1, 1",
			on, runbookRunCount(t, in.DB), len(adminEvents(t, in.DB, "runbook.action")), len(adminEvents(t, in.DB, "skill.disabled")))
	}
	res := b.get(loc)
	runID := loc[strings.LastIndex(loc, "/")+1:]
	if text(res, "run-status") != "Done" || statusOf(res, "run-status") != "done" || !strings.Contains(text(res, "run-outcome"), "Switched the skill refunds off") {
		t.Errorf("result page: %q %q", text(res, "run-status"), text(res, "run-outcome"))
	}
	ev := lastAudit(t, in.DB)
	// carol may not open the audit trail: the page shows the event itself.
	if res.Doc.Find(`[data-testid="run-audit"]`).Length() != 0 || text(res, "run-event-seq") != strconv.FormatInt(ev.Seq, 10) {
		t.Errorf("result page: audit link %d, event %q; want no link and event %d inline",
			res.Doc.Find(`[data-testid="run-audit"]`).Length(), text(res, "run-event-seq"), ev.Seq)
	}
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	if href, _ := erin.get(loc).Doc.Find(`[data-testid="run-audit"]`).Attr("href"); href != "/audit?subject_id="+runID+"&subject_type=runbook" {
		t.Errorf("audit link for an admin = %q", href)
	}
	if ev.Verb != "runbook.action" || ev.Subject.ID != runID || ev.Details["reason"] != "provider is down" || ev.Details["tool"] != "switch_skill" {
		t.Errorf("last event = %s %v %v", ev.Verb, ev.Subject, ev.Details)
	}
	hist := b.get("/runbooks/pii-in-traces")
	if hist.Doc.Find(`[data-testid="runbook-runs"] tbody tr`).Length() != 1 || !strings.Contains(hist.Doc.Find(`[data-testid="runbook-runs"]`).Text(), "provider is down") {
		t.Errorf("run history:\n%s", hist.Doc.Find(`[data-testid="runbook-runs"]`).Text())
	}
}

// A purge waits for an approver: the press creates the request, the
// approver's approval runs it (in the decision), and only the range goes.
func TestRunbookPurgeRunsOnAnotherPersonsApproval(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	acme, err := tenants.BySlug(ctx, in.DB.Read(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		for id, at := range map[string]time.Time{"j-pii-recent": now.Add(-time.Hour), "j-pii-old": now.Add(-10 * 24 * time.Hour)} {
			if _, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, created_at) VALUES (?, ?, 'r', 'c', 'x', 'completed', ?)`,
				id, acme.ID, store.FormatTime(at)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	left := func() int {
		return countRows(t, in.DB, `SELECT COUNT(*) FROM journeys WHERE id IN ('j-pii-recent', 'j-pii-old')`)
	}
	path := "/runbooks/pii-in-traces/actions/purge-acme-last-week"
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	if p := alice.post(path, alice.withCSRF(url.Values{"reason": {"x"}, "token": {"t-alice"}}), nil); p.Status != http.StatusForbidden {
		t.Errorf("an approver pressing = %d, want 403", p.Status)
	}

	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	tok := confirmToken(t, carol, path)
	p := carol.post(path, carol.withCSRF(url.Values{"reason": {"card numbers in refund traces"}, "token": {tok}}), nil)
	href, _ := p.Doc.Find(`[data-testid="run-approval"]`).Attr("href")
	if p.Status != http.StatusOK || text(p, "run-status") != "Awaiting approval" || statusOf(p, "run-status") != "awaiting_approval" || !strings.HasPrefix(href, "/approvals/act_") {
		t.Fatalf("press = %d, status %q, approval link %q; want awaiting approval with its link:\n%s", p.Status, text(p, "run-status"), href, p.Body)
	}
	if left() != 2 {
		t.Fatal("the press purged before any approval")
	}
	a := alice.get(href)
	p = alice.post(href+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", digestOnPage(t, a, "approve-form"))), nil)
	if p.Status != http.StatusOK || statusOf(p, "action-status") != "executed" {
		t.Fatalf("approve = %d, status %q; want executed", p.Status, statusOf(p, "action-status"))
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys WHERE id = 'j-pii-old'`); left() != 1 || n != 1 {
		t.Errorf("journeys left %d (old kept %d); want only the last week's purged", left(), n)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM runbook_runs WHERE status = 'done'`); n != 1 {
		t.Errorf("finished runs = %d, want 1", n)
	}
}

// On-call follows the runbook "MCP server misbehaving": its button
// switches the MCP server shop off (after the confirmation says what
// changes), with the presser's reason in the switch's audit event; the
// Kill switches page then shows it off with that reason.
func TestRunbookSwitchesMCPServerOff(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	path := "/runbooks/mcp-server-misbehaving/actions/switch-off-shop"
	if p := b.get(path); p.Status != http.StatusNotFound {
		t.Errorf("the button before shop is registered = %d, want 404", p.Status)
	}
	mcpRegistered(t, in, "shop")
	doc := b.get("/runbooks/mcp-server-misbehaving")
	if doc.Doc.Find(`[data-testid="action-switch-off-shop"]`).Length() != 1 {
		t.Fatalf("the runbook lacks its button:\n%s", doc.Body)
	}
	confirm := b.get(path)
	if !strings.Contains(confirm.Body, "Switch the MCP server shop off for every tenant") {
		t.Errorf("the confirmation does not say what changes:\n%s", confirm.Body)
	}
	tok := confirmToken(t, b, path)
	p := b.post(path, b.withCSRF(url.Values{"reason": {"shop answers 500s"}, "token": {tok}}), nil)
	if p.Status != http.StatusOK {
		t.Fatalf("press = %d", p.Status)
	}
	if s, _ := mcpservers.Get(context.Background(), in.DB.Read(), "shop"); s.Enabled {
		t.Fatal("shop is still on")
	}
	if evs := adminEvents(t, in.DB, "mcp.server_disable"); len(evs) != 1 || evs[0].Details["reason"] != "shop answers 500s" || evs[0].Actor.ID != principalID(t, in.DB, "dev-carol") {
		t.Errorf("mcp.server_disable = %+v", evs)
	}
	if evs := adminEvents(t, in.DB, "runbook.action"); len(evs) != 1 || evs[0].Details["tool"] != "switch_mcp_server" {
		t.Errorf("runbook.action = %+v", evs)
	}
	sw := b.get("/switches")
	if switchState(sw, "mcp-server", "shop") != "off" || text(sw, "switch-reason-shop") != "shop answers 500s" {
		t.Errorf("Kill switches: shop %q, reason %q", switchState(sw, "mcp-server", "shop"), text(sw, "switch-reason-shop"))
	}
}

// A runbook button that switches something back on loosens a control: the
// on-call who pressed it sees that it waits for a second admin, nothing
// changes, and it applies once frank approves. Switching off stays one
// press.
func TestRunbookSwitchOnWaitsForASecondAdmin(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	off := "/runbooks/pii-in-traces/actions/switch-off-refunds"
	b.post(off, b.withCSRF(url.Values{"reason": {"INC-7"}, "token": {confirmToken(t, b, off)}}), nil)
	if on, _ := catalog.SkillEnabled(ctx, in.DB.Read(), "refunds"); on {
		t.Fatal("switching off by a runbook did not apply at once")
	}
	path := "/runbooks/pii-in-traces/actions/switch-on-refunds"
	if eff := text(b.get(path), "confirm-effect"); !strings.Contains(eff, "second admin") {
		t.Errorf("the confirmation says %q, want that it asks a second admin", eff)
	}
	res := b.post(path, b.withCSRF(url.Values{"reason": {"INC-7 over"}, "token": {confirmToken(t, b, path)}}), nil)
	if !strings.Contains(text(res, "run-outcome"), "Waits for a second admin") {
		t.Errorf("the run says %q, want that it waits for a second admin", text(res, "run-outcome"))
	}
	if on, _ := catalog.SkillEnabled(ctx, in.DB.Read(), "refunds"); on {
		t.Fatal("the button switched refunds on before a second admin approved")
	}
	cs, err := changes.PendingOn(ctx, in.DB.Read(), "refunds", time.Now(), changes.SkillSwitch)
	if err != nil || len(cs) != 1 || cs[0].Reason != "INC-7 over" {
		t.Fatalf("pending changes on refunds = %+v (%v), want one with the reason", cs, err)
	}
	if !strings.Contains(text(res, "run-outcome"), cs[0].ID) {
		t.Errorf("the run's outcome %q does not name the change %s", text(res, "run-outcome"), cs[0].ID)
	}
	approveChangeAt(t, in, "/changes/"+cs[0].ID)
	if on, _ := catalog.SkillEnabled(ctx, in.DB.Read(), "refunds"); !on {
		t.Error("refunds still off after frank approved")
	}
}
