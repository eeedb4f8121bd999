package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
)

// refundJourney is an agent's refund request (skill refunds: lookup_order,
// then issue_refund).
const refundJourney = "Refund ORD-1002, the t-shirts arrived torn"

func switchState(p page, kind, name string) string {
	return strings.TrimSpace(p.Doc.Find(`[data-testid="switch-` + kind + `-` + name + `"] [data-testid="state"]`).Text())
}

// checkSwitchEvent asserts the newest audit event: verb about subject, by
// actor, with the reason (none when "").
func checkSwitchEvent(t *testing.T, in *instance, verb string, subject audit.Subject, actor, reason string) {
	t.Helper()
	// The newest event of verb: switching on is applied after a second
	// admin approves, so change.applied follows it.
	ev := lastAudit(t, in.DB)
	if evs := adminEvents(t, in.DB, verb); len(evs) > 0 {
		ev = evs[len(evs)-1]
	}
	got, _ := ev.Details["reason"].(string)
	if ev.Verb != verb || ev.Subject != subject || ev.Actor.Type != audit.ActorPrincipal || ev.Actor.ID != actor || ev.Actor.Name == "" || got != reason {
		d, _ := json.Marshal(ev.Details)
		t.Errorf("last event = %s %v by %v (%s); want %s %v by %s, reason %q", ev.Verb, ev.Subject, ev.Actor, d, verb, subject, actor, reason)
	}
}

func TestKillSwitchesOnlyForOncallAndAdmins(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	for _, tc := range []struct {
		user   string
		status int
		nav    bool
	}{
		{"carol", http.StatusOK, true},
		{"erin", http.StatusOK, true},
		{"alice", http.StatusForbidden, false},
		{"dave", http.StatusForbidden, false},
	} {
		b := newBrowser(t, in.URL)
		b.loginDev(tc.user)
		home := b.get("/")
		if got := home.Doc.Find(`nav a[href="/switches"]`).Length() == 1; got != tc.nav {
			t.Errorf("%s: navigation offers Kill switches = %v, want %v", tc.user, got, tc.nav)
		}
		for _, path := range []string{"/switches", "/switches/tools/issue_refund/off"} {
			if p := b.get(path); p.Status != tc.status {
				t.Errorf("%s: GET %s = %d, want %d", tc.user, path, p.Status, tc.status)
			}
		}
		before := auditCount(t, in.DB)
		form := b.withCSRF(url.Values{"reason": {"trying"}})
		for _, path := range []string{"/switches/tools/issue_refund/off", "/switches/skills/refunds/off", "/switches/tools/issue_refund/on"} {
			p := b.post(path, form, nil)
			if tc.status == http.StatusForbidden && p.Status != http.StatusForbidden {
				t.Errorf("%s: POST %s = %d, want 403", tc.user, path, p.Status)
			}
		}
		if tc.status == http.StatusForbidden && auditCount(t, in.DB) != before {
			t.Errorf("%s: refused presses were recorded", tc.user)
		}
		// Put everything back on for the next user.
		b.post("/switches/skills/refunds/on", form, nil)
	}
}

func TestKillSwitchToolOffAndOn(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	carolID := principalID(t, in.DB, "dev-carol")
	subject := audit.Subject{Type: "tool", ID: "issue_refund"}

	list := carol.get("/switches")
	if list.Status != http.StatusOK || switchState(list, "tool", "issue_refund") != "on" || switchState(list, "skill", "refunds") != "on" {
		t.Fatalf("GET /switches = %d, issue_refund %q, refunds %q; want 200, both on", list.Status,
			switchState(list, "tool", "issue_refund"), switchState(list, "skill", "refunds"))
	}
	confirm := carol.get("/switches/tools/issue_refund/off")
	if eff := text(confirm, "confirm-effect"); !strings.Contains(eff, "403 tool_disabled") || !strings.Contains(eff, "refunds") {
		t.Errorf("confirm effect = %q, want what stops: 403 tool_disabled, in skill refunds", eff)
	}
	if confirm.Doc.Find(`form textarea[name="reason"][required]`).Length() != 1 {
		t.Error("the confirmation has no required reason inside its form")
	}

	// Without a CSRF token, or without a reason, nothing happens.
	before := auditCount(t, in.DB)
	if p := carol.post("/switches/tools/issue_refund/off", url.Values{"reason": {"INC-9"}}, nil); p.Status != http.StatusForbidden {
		t.Errorf("switch off without CSRF = %d, want 403", p.Status)
	}
	p := carol.post("/switches/tools/issue_refund/off", carol.withCSRF(url.Values{"reason": {"  "}}), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-reason") == "" {
		t.Errorf("switch off without a reason = %d (error %q), want 422 with the field's error, like every other form", p.Status, text(p, "error-reason"))
	}
	if p.Doc.Find(`form textarea[name="reason"][required]`).Length() != 1 {
		t.Error("the refused press does not show the form again")
	}
	if auditCount(t, in.DB) != before || switchState(carol.get("/switches"), "tool", "issue_refund") != "on" {
		t.Fatal("a refused press changed or recorded something")
	}

	reason := "INC-9: refunds paid twice by the provider"
	p = carol.post("/switches/tools/issue_refund/off", carol.withCSRF(url.Values{"reason": {reason}}), nil)
	if p.URL.Path != "/switches" || !strings.Contains(text(p, "notice"), "403 tool_disabled") || switchState(p, "tool", "issue_refund") != "off" {
		t.Fatalf("switch off landed on %s (notice %q), issue_refund %q; want /switches, off", p.URL, text(p, "notice"), switchState(p, "tool", "issue_refund"))
	}
	checkSwitchEvent(t, in, "tool.disable", subject, carolID, reason)
	n := auditCount(t, in.DB)
	p = carol.post("/switches/tools/issue_refund/off", carol.withCSRF(url.Values{"reason": {"again"}}), nil)
	if !strings.Contains(text(p, "notice"), "already off") || auditCount(t, in.DB) != n {
		t.Errorf("second press: notice %q, %d new events; want already off, none", text(p, "notice"), auditCount(t, in.DB)-n)
	}

	// The agent's refund is refused at the switched-off tool.
	r := journey(t, in, in.DemoKey, refundJourney, nil)
	if r.Status != http.StatusForbidden || r.code() != "tool_disabled" {
		t.Errorf("refund journey while issue_refund is off = %d %s, want 403 tool_disabled", r.Status, r.code())
	}

	// On: one press, no reason, no confirmation — and, as it loosens,
	// a second admin's approval (docs/changes.md).
	approveAsFrank(t, in, carol.post("/switches/tools/issue_refund/on", carol.withCSRF(url.Values{}), nil))
	if p = carol.get("/switches"); switchState(p, "tool", "issue_refund") != "on" {
		t.Errorf("switch on: issue_refund %q", switchState(p, "tool", "issue_refund"))
	}
	checkSwitchEvent(t, in, "tool.enable", subject, carolID, "")
	n = auditCount(t, in.DB)
	p = carol.post("/switches/tools/issue_refund/on", carol.withCSRF(url.Values{}), nil)
	if !strings.Contains(text(p, "notice"), "already on") || auditCount(t, in.DB) != n {
		t.Errorf("second on: notice %q, %d new events; want already on, none", text(p, "notice"), auditCount(t, in.DB)-n)
	}
	if r := journey(t, in, in.DemoKey, refundJourney, nil); r.Status != http.StatusAccepted {
		t.Errorf("refund journey after switching on = %d %s, want 202", r.Status, r.code())
	}
	// The admin's catalog shows the same switch.
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	if got := text(erin.get("/tools"), "tool-switch-issue_refund"); !strings.HasPrefix(got, "on") {
		t.Errorf("the catalog shows issue_refund %q, want on", got)
	}
}

func TestKillSwitchSkillOffAndOn(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	erinID := principalID(t, in.DB, "dev-erin")
	subject := audit.Subject{Type: "skill", ID: "refunds"}

	if eff := text(erin.get("/switches/skills/refunds/off"), "confirm-effect"); !strings.Contains(eff, "422 skill_disabled") || !strings.Contains(eff, "Journeys already running finish") {
		t.Errorf("confirm effect = %q, want what stops and what finishes", eff)
	}
	reason := "INC-10: refund skill misreads amounts"
	p := erin.post("/switches/skills/refunds/off", erin.withCSRF(url.Values{"reason": {reason}}), nil)
	if switchState(p, "skill", "refunds") != "off" || text(p, "switch-reason-refunds") != reason {
		t.Fatalf("refunds %q (reason %q), want off with the reason", switchState(p, "skill", "refunds"), text(p, "switch-reason-refunds"))
	}
	checkSwitchEvent(t, in, "skill.disabled", subject, erinID, reason)
	n := auditCount(t, in.DB)
	erin.post("/switches/skills/refunds/off", erin.withCSRF(url.Values{"reason": {"again"}}), nil)
	if auditCount(t, in.DB) != n {
		t.Error("pressing off twice recorded a second event")
	}

	if r := journey(t, in, in.DemoKey, refundJourney, nil); r.Status != http.StatusUnprocessableEntity || r.code() != "skill_disabled" {
		t.Errorf("refund journey while refunds is off = %d %s, want 422 skill_disabled", r.Status, r.code())
	}
	body, _ := json.Marshal(map[string]string{"input": "Where is my order ORD-1003?", "skill": "refunds"})
	if r := callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/journeys", in.DemoKey, body, nil); r.Status != http.StatusUnprocessableEntity || r.code() != "skill_disabled" {
		t.Errorf("journey naming refunds = %d %s, want 422 skill_disabled", r.Status, r.code())
	}
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.Status != http.StatusOK {
		t.Errorf("order status journey while refunds is off = %d %s, want 200", r.Status, r.code())
	}

	approveAsFrank(t, in, erin.post("/switches/skills/refunds/on", erin.withCSRF(url.Values{}), nil))
	checkSwitchEvent(t, in, "skill.enabled", subject, erinID, "")
	if r := journey(t, in, in.DemoKey, refundJourney, nil); r.Status != http.StatusAccepted || r.str("skill") != "refunds" {
		t.Errorf("refund journey after switching on = %d %s (skill %q), want 202 refunds", r.Status, r.code(), r.str("skill"))
	}
}

func TestKillSwitchUnknownTargets(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	for _, path := range []string{"/switches/tools/no_such_tool/off", "/switches/skills/weather/off", "/switches/gadgets/issue_refund/off"} {
		if p := carol.get(path); p.Status != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, p.Status)
		}
		if p := carol.post(path, carol.withCSRF(url.Values{"reason": {"x"}}), nil); p.Status != http.StatusNotFound {
			t.Errorf("POST %s = %d, want 404", path, p.Status)
		}
	}
}

// An action approved while its tool is off fails safely, and its page
// says why.
func TestKillSwitchApprovedActionFailsVisibly(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	a := pendingAction(t, in, "ORD-1005")
	carol.post("/switches/tools/issue_refund/off", carol.withCSRF(url.Values{"reason": {"INC-11"}}), nil)
	// Before approving, alice is told it cannot run now.
	if w := text(alice.get("/approvals/"+a.ID), "approve-warning"); !strings.Contains(w, "issue_refund is switched off (reason: INC-11)") {
		t.Errorf("approve warning = %q, want the switch and its reason", w)
	}
	if p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status != http.StatusOK {
		t.Fatalf("approve = %d", p.Status)
	}
	p := waitStatus(t, alice, a.ID, approvals.StatusFailed)
	story := text(p, "block-story")
	off, approved := strings.Index(story, "was switched off (reason: INC-11)"), strings.Index(story, "Approved")
	if off < 0 || approved < 0 || off > approved || !strings.Contains(story, "sent nothing to the provider") {
		t.Errorf("block story = %q, want: switched off (INC-11), then approved, and nothing sent", story)
	}
	if strings.Contains(p.Body, "Check the provider") {
		t.Error("a blocked execution tells people to check the provider, though nothing was sent")
	}
	if p.Doc.Find(`[data-testid="retry"]`).Length() != 0 {
		t.Error("alice (approver) is offered Retry execution")
	}
	if c := carol.get("/approvals/" + a.ID); c.Doc.Find(`[data-testid="retry"]`).Length() != 0 {
		t.Error("Retry execution offered while the tool is still off")
	}
	if r := carol.post("/approvals/"+a.ID+"/retry", carol.withCSRF(nil), nil); r.Status != http.StatusConflict {
		t.Errorf("retry while still off = %d, want 409", r.Status)
	}

	// Once the tool is on again, on-call retries it under the same key.
	approveAsFrank(t, in, carol.post("/switches/tools/issue_refund/on", carol.withCSRF(nil), nil))
	c := carol.get("/approvals/" + a.ID)
	if c.Doc.Find(`[data-testid="retry"]`).Length() != 1 {
		t.Fatalf("Retry execution not offered to on-call once the block is lifted: %q", text(c, "action-failure"))
	}
	if r := alice.post("/approvals/"+a.ID+"/retry", alice.withCSRF(nil), nil); r.Status != http.StatusForbidden {
		t.Errorf("approver retrying = %d, want 403", r.Status)
	}
	carol.post("/approvals/"+a.ID+"/retry", carol.withCSRF(nil), nil)
	waitStatus(t, carol, a.ID, approvals.StatusExecuted)
	if got := getAction(t, in, a.ID); got.IdempotencyKey != a.IdempotencyKey {
		t.Errorf("retried under key %q, want the same %q", got.IdempotencyKey, a.IdempotencyKey)
	}
	if ev := lastAuditOf(t, in, "action.retried", a.ID); ev.Actor.Type != "principal" {
		t.Errorf("action.retried actor = %+v, want carol", ev.Actor)
	}
}

// Reversing while the compensating tool is off: the action page says so
// instead of offering Reverse, and a press anyway is refused with 409.
func TestKillSwitchCompensatingToolOff(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	a := pendingAction(t, in, "ORD-1005")
	alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil)
	waitStatus(t, alice, a.ID, approvals.StatusExecuted)

	carol.post("/switches/tools/reverse_refund/off", carol.withCSRF(url.Values{"reason": {"INC-12"}}), nil)
	p := alice.get("/approvals/" + a.ID)
	if p.Doc.Find(`[data-testid="reverse"]`).Length() != 0 || !strings.Contains(text(p, "reverse-off"), "reverse_refund is switched off") {
		t.Errorf("action page: reverse button %d, note %q; want no button and the note", p.Doc.Find(`[data-testid="reverse"]`).Length(), text(p, "reverse-off"))
	}
	before := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE compensates = ?`, a.ID)
	p = alice.post("/approvals/"+a.ID+"/reverse", alice.withCSRF(url.Values{"reason": {"customer returned the goods"}}), nil)
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "reverse_refund is switched off") {
		t.Errorf("reverse while reverse_refund is off = %d, want 409 saying why", p.Status)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE compensates = ?`, a.ID); n != before {
		t.Errorf("%d reversals created, want none", n-before)
	}

	approveAsFrank(t, in, carol.post("/switches/tools/reverse_refund/on", carol.withCSRF(url.Values{}), nil))
	if p := alice.get("/approvals/" + a.ID); p.Doc.Find(`[data-testid="reverse"]`).Length() != 1 {
		t.Error("after switching reverse_refund on, the action page does not offer Reverse")
	}
}

// On-call and admins switch one MCP tool (SERVER__TOOL) and an MCP
// server off with a reason, after confirming, and on again, on the Kill
// switches page; an approver or an auditor may not, and their presses
// record nothing.
func TestKillSwitchMCPToolAndServer(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	mcpRegistered(t, in, "shop")
	ctx := context.Background()
	for _, user := range []string{"alice", "dave"} {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		before := auditCount(t, in.DB)
		for _, path := range []string{"/switches/mcp-tools/shop__pay/off", "/switches/mcp-servers/shop/off", "/switches/mcp-tools/shop__pay/on"} {
			if p := b.post(path, b.withCSRF(url.Values{"reason": {"trying"}}), nil); p.Status != http.StatusForbidden {
				t.Errorf("%s: POST %s = %d, want 403", user, path, p.Status)
			}
		}
		if p := b.get("/switches/mcp-tools/shop__pay/off"); p.Status != http.StatusForbidden {
			t.Errorf("%s: GET the confirmation = %d, want 403", user, p.Status)
		}
		if auditCount(t, in.DB) != before {
			t.Errorf("%s: refused presses were recorded", user)
		}
	}

	for _, user := range []string{"carol", "erin"} {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		id := principalID(t, in.DB, "dev-"+user)
		subject := audit.Subject{Type: "mcp_tool", ID: "shop/pay"}
		list := b.get("/switches")
		if list.Status != http.StatusOK || switchState(list, "mcp-tool", "shop__pay") != "on" || switchState(list, "mcp-server", "shop") != "on" {
			t.Fatalf("%s: GET /switches = %d, shop__pay %q, shop %q", user, list.Status, switchState(list, "mcp-tool", "shop__pay"), switchState(list, "mcp-server", "shop"))
		}
		if href, _ := list.Doc.Find(`[data-testid="switch-mcp-tool-shop__pay"] [data-testid="switch-off"]`).Attr("href"); href != "/switches/mcp-tools/shop__pay/off" {
			t.Errorf("%s: Switch off… leads to %q", user, href)
		}
		confirm := b.get("/switches/mcp-tools/shop__pay/off")
		if eff := text(confirm, "confirm-effect"); !strings.Contains(eff, "shop__pay") || !strings.Contains(eff, "/mcp") ||
			confirm.Doc.Find(`form textarea[name="reason"][required]`).Length() != 1 {
			t.Errorf("%s: confirmation effect %q", user, eff)
		}
		before := auditCount(t, in.DB)
		if p := b.post("/switches/mcp-tools/shop__pay/off", b.withCSRF(url.Values{"reason": {" "}}), nil); p.Status != http.StatusUnprocessableEntity ||
			text(p, "error-reason") == "" || auditCount(t, in.DB) != before {
			t.Fatalf("%s: off without a reason = %d", user, p.Status)
		}
		reason := "INC-12: " + user + " saw pay double-charge"
		p := b.post("/switches/mcp-tools/shop__pay/off", b.withCSRF(url.Values{"reason": {reason}}), nil)
		if !strings.HasPrefix(text(p, "notice"), "MCP tool switched off") || switchState(p, "mcp-tool", "shop__pay") != "off" ||
			text(p, "switch-reason-shop__pay") != reason || switchState(p, "mcp-tool", "shop__lookup_order") != "on" {
			t.Fatalf("%s: off: notice %q, state %q, reason %q", user, text(p, "notice"), switchState(p, "mcp-tool", "shop__pay"), text(p, "switch-reason-shop__pay"))
		}
		checkSwitchEvent(t, in, "mcp.tool_disable", subject, id, reason)
		if tl, _ := mcpservers.GetTool(ctx, in.DB.Read(), "shop", "pay"); tl.Enabled {
			t.Fatalf("%s: shop__pay is still on", user)
		}
		n := auditCount(t, in.DB)
		if p := b.post("/switches/mcp-tools/shop__pay/off", b.withCSRF(url.Values{"reason": {"again"}}), nil); !strings.Contains(text(p, "notice"), "already off") || auditCount(t, in.DB) != n {
			t.Errorf("%s: second press: notice %q", user, text(p, "notice"))
		}
		// Switching back on loosens: it waits for a second admin
		// (docs/changes.md), and applies once frank approves.
		p = b.post("/switches/mcp-tools/shop__pay/on", b.withCSRF(url.Values{}), nil)
		if tl, _ := mcpservers.GetTool(ctx, in.DB.Read(), "shop", "pay"); tl.Enabled {
			t.Fatalf("%s: asking to switch shop__pay on switched it on before a second admin approved", user)
		}
		approveAsFrank(t, in, p)
		if p := b.get("/switches"); switchState(p, "mcp-tool", "shop__pay") != "on" {
			t.Errorf("%s: after frank approved, shop__pay is %q", user, switchState(p, "mcp-tool", "shop__pay"))
		}
		checkSwitchEvent(t, in, "mcp.tool_enable", subject, id, "")

		p = b.post("/switches/mcp-servers/shop/off", b.withCSRF(url.Values{"reason": {"INC-13"}}), nil)
		if !strings.HasPrefix(text(p, "notice"), "MCP server switched off") || switchState(p, "mcp-server", "shop") != "off" ||
			!strings.Contains(text(p, "switch-mcp-tool-shop__pay"), "its server is off") {
			t.Errorf("%s: server off: notice %q", user, text(p, "notice"))
		}
		checkSwitchEvent(t, in, "mcp.server_disable", audit.Subject{Type: "mcp_server", ID: "shop"}, id, "INC-13")
		p = b.post("/switches/mcp-servers/shop/on", b.withCSRF(url.Values{}), nil)
		if s, _ := mcpservers.Get(ctx, in.DB.Read(), "shop"); s.Enabled {
			t.Fatalf("%s: asking to switch shop on switched it on before a second admin approved", user)
		}
		approveAsFrank(t, in, p)
		if s, _ := mcpservers.Get(ctx, in.DB.Read(), "shop"); !s.Enabled {
			t.Errorf("%s: shop is still off", user)
		}
	}
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	for _, path := range []string{"/switches/mcp-tools/shop__nope/off", "/switches/mcp-tools/shop/off", "/switches/mcp-servers/nope/off"} {
		if p := b.get(path); p.Status != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, p.Status)
		}
	}
}
