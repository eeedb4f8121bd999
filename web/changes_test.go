package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tenants"
)

// approveAsFrank takes a page that landed on a pending change, checks it
// is one, and approves it as frank, the second admin; it returns the
// change's page after the approval.
func approveAsFrank(t *testing.T, in *instance, landed page) page {
	t.Helper()
	if !strings.HasPrefix(landed.URL.Path, "/changes/chg_") || !strings.Contains(text(landed, "notice"), "second admin") {
		t.Fatalf("the loosening change landed on %s (%d) %q, want its pending change", landed.URL, landed.Status, text(landed, "notice"))
	}
	return approveChangeAt(t, in, landed.URL.Path)
}

// approveChangeAt approves the change at path (/changes/ID) as frank.
func approveChangeAt(t *testing.T, in *instance, path string) page {
	t.Helper()
	f := newBrowser(t, in.URL)
	f.loginDev("frank")
	cp := f.get(path)
	digest, _ := cp.Doc.Find(`input[name="digest"]`).Attr("value")
	p := f.post(path+"/decide", f.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil)
	if p.Status != http.StatusOK || !strings.Contains(text(p, "change-status"), "applied") {
		t.Fatalf("frank approving %s: %d %q", path, p.Status, text(p, "change-status"))
	}
	return p
}

// TestLooseningChangesWaitForASecondAdmin drives every governed kind
// through the console: asked by erin, nothing changes and the change is
// pending; erin may not approve it; frank approves and it applies. The
// same forms tighten at once.
func TestLooseningChangesWaitForASecondAdmin(t *testing.T) {
	in, erin := adminSession(t, "erin")
	ctx := context.Background()
	acme := adminTenantBySlug(t, in.DB, "acme")
	if _, err := budgets.SetAudited(ctx, in.DB, testActor, budgets.Spec{TenantID: acme.ID, Period: budgets.Day, LimitMicros: 10_000_000, AlertPercent: 80}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Switch(ctx, in.DB, testActor, "issue_refund", false, "INC-1"); err != nil {
		t.Fatal(err)
	}
	mcpRegistered(t, in, "shop")
	if _, err := mcpservers.SwitchServer(ctx, in.DB, testActor, "shop", false, "INC-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpservers.SetToolEnabled(ctx, in.DB, testActor, "shop", "pay", false, "INC-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.SetFrozen(ctx, in.DB, testActor, acme.ID, true, "INC-4"); err != nil {
		t.Fatal(err)
	}
	serverOn := func() string { s, _ := mcpservers.Get(ctx, in.DB.Read(), "shop"); return strconv.FormatBool(s.Enabled) }
	mcpToolOn := func() string {
		tl, _ := mcpservers.GetTool(ctx, in.DB.Read(), "shop", "pay")
		return strconv.FormatBool(tl.Enabled)
	}
	frozen := func() string { return strconv.FormatBool(adminTenantBySlug(t, in.DB, "acme").Frozen) }
	threshold := func() int64 {
		m, _ := tenants.ThresholdFor(ctx, in.DB.Read(), acme.ID, "USD")
		return m
	}
	toolOn := func() bool { tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); return tl.Enabled }
	toolImpact := func() risk.Impact { tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); return tl.Impact }
	limit := func() int64 { b, _ := budgets.Get(ctx, in.DB.Read(), acme.ID); return b.LimitMicros }
	window := func() int { tn := adminTenantBySlug(t, in.DB, "acme"); return int(tn.DualControlWindow.Hours()) }
	hosts := func() string { h, _ := models.AllowedHosts(ctx, in.DB.Read()); return strings.Join(h, " ") }
	toolForm := func(impact string) url.Values {
		form := toolFormValues()
		form.Set("description", "Refund an order")
		form.Set("reversibility", "irreversible")
		form.Set("impact", impact)
		return form
	}

	kinds := []struct {
		kind   string
		path   string
		form   url.Values
		before func() string
	}{
		{changes.DualControl, "/tenants/acme/dual-control", url.Values{"currency": {"USD"}, "dual_control": {"1000000.00"}}, func() string { return strconv.FormatInt(threshold(), 10) }},
		{changes.DualControlWindow, "/tenants/acme/dual-control-window", url.Values{"window_hours": {"1"}}, func() string { return strconv.Itoa(window()) }},
		{changes.ToolSwitch, "/tools/issue_refund/enable", url.Values{}, func() string { return strconv.FormatBool(toolOn()) }},
		{changes.ToolRisk, "/tools/issue_refund", nil, func() string { return string(toolImpact()) }},
		{changes.BudgetLimit, "/budgets/acme", url.Values{"period": {"day"}, "limit": {"500"}, "alert_percent": {"80"}}, func() string { return strconv.FormatInt(limit(), 10) }},
		{changes.AllowHost, "/model-allowed-hosts", url.Values{"allowed_hosts": {"llm.corp.internal"}}, hosts},
		{changes.MCPServerSwitch, "/switches/mcp-servers/shop/on", url.Values{}, serverOn},
		{changes.MCPToolSwitch, "/switches/mcp-tools/shop__pay/on", url.Values{}, mcpToolOn},
		{changes.TenantFreeze, "/tenants/acme/unfreeze", url.Values{}, frozen},
	}
	pendingPage := map[string]string{changes.DualControl: "/tenants/acme", changes.DualControlWindow: "/tenants/acme",
		changes.ToolSwitch: "/switches", changes.ToolRisk: "/tools/issue_refund/edit", changes.BudgetLimit: "/budgets",
		changes.AllowHost: "/models", changes.MCPServerSwitch: "/switches", changes.MCPToolSwitch: "/switches", changes.TenantFreeze: "/tenants/acme"}
	for _, k := range kinds {
		form := k.form
		if form == nil {
			form = toolForm("low")
		}
		form.Set("change_reason", "INC-42 "+k.kind)
		was := k.before()
		landed := erin.post(k.path, erin.withCSRF(form), nil)
		if got := k.before(); got != was {
			t.Errorf("%s: asking changed it from %s to %s before a second admin approved", k.kind, was, got)
		}
		if text(landed, "change-reason") != "INC-42 "+k.kind || text(landed, "change-requested-by") == "" {
			t.Errorf("%s: the pending change shows reason %q, asked by %q", k.kind, text(landed, "change-reason"), text(landed, "change-requested-by"))
		}
		// The requester is refused, even with the right digest.
		digest, _ := landed.Doc.Find(`input[name="digest"]`).Attr("value")
		if text(landed, "change-why") == "" || digest != "" {
			t.Errorf("%s: the requester is offered the decision", k.kind)
		}
		id := strings.TrimPrefix(landed.URL.Path, "/changes/")
		c, _ := changes.Get(ctx, in.DB.Read(), id)
		own := erin.post("/changes/"+id+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil)
		if own.Status != http.StatusForbidden || k.before() != was {
			t.Errorf("%s: the requester approving = %d, value %s; want 403 and unchanged", k.kind, own.Status, k.before())
		}
		// The page of what it changes shows the change waiting.
		if page, ok := pendingPage[k.kind]; ok {
			if href, _ := erin.get(page).Doc.Find(`[data-testid="pending-changes"] a[href="/changes/` + id + `"]`).Attr("href"); href == "" {
				t.Errorf("%s: %s does not show the pending change", k.kind, page)
			}
		}
		approveAsFrank(t, in, landed)
		if got := k.before(); got == was {
			t.Errorf("%s: still %s after frank approved", k.kind, got)
		}
	}
	if serverOn() != "true" || mcpToolOn() != "true" || frozen() != "false" {
		t.Errorf("after approvals: MCP server on %s, MCP tool on %s, acme frozen %s", serverOn(), mcpToolOn(), frozen())
	}
	if threshold() != 100_000_000 || window() != 1 || !toolOn() || toolImpact() != risk.ImpactLow || limit() != 500_000_000 || hosts() != "llm.corp.internal" {
		t.Errorf("after approvals: threshold %d, window %d, tool on %v, impact %s, limit %d, hosts %q", threshold(), window(), toolOn(), toolImpact(), limit(), hosts())
	}

	// Tightening applies at once, with no change recorded.
	tight := []struct {
		path string
		form url.Values
		ok   func() bool
	}{
		{"/tenants/acme/dual-control", url.Values{"currency": {"USD"}, "dual_control": {"500.00"}}, func() bool { return threshold() == 50_000 }},
		{"/tenants/acme/dual-control-window", url.Values{"window_hours": {"48"}}, func() bool { return window() == 48 }},
		{"/budgets/acme", url.Values{"period": {"day"}, "limit": {"100"}, "alert_percent": {"80"}}, func() bool { return limit() == 100_000_000 }},
		{"/tools/issue_refund", toolForm("high"), func() bool { return toolImpact() == risk.ImpactHigh }},
		{"/model-allowed-hosts", url.Values{"allowed_hosts": {""}}, func() bool { return hosts() == "" }},
		{"/switches/mcp-tools/shop__pay/off", url.Values{"reason": {"INC-44"}}, func() bool { return mcpToolOn() == "false" }},
		{"/switches/mcp-servers/shop/off", url.Values{"reason": {"INC-45"}}, func() bool { return serverOn() == "false" }},
		{"/tenants/acme/freeze", url.Values{"reason": {"INC-46"}}, func() bool { return frozen() == "true" }},
	}
	for _, tt := range tight {
		p := erin.post(tt.path, erin.withCSRF(tt.form), nil)
		if strings.HasPrefix(p.URL.Path, "/changes/") || !tt.ok() {
			t.Errorf("tightening %s landed on %s (%d); applied %v, want at once", tt.path, p.URL.Path, p.Status, tt.ok())
		}
	}
	p := erin.post("/tools/issue_refund/disable", erin.withCSRF(url.Values{"reason": {"INC-43"}}), nil)
	if toolOn() || strings.HasPrefix(p.URL.Path, "/changes/") {
		t.Errorf("switching off landed on %s; tool on %v, want off at once", p.URL.Path, toolOn())
	}
}

// TestBreakGlass: with WARDEN_BREAK_GLASS on, erin switches a tool back on
// at once with a reason; it is recorded as break_glass, on-call's alert
// route gets a critical message, and the admin home lists it until frank
// marks it reviewed. Without a reason, or on an installation that does
// not allow it, nothing changes.
func TestBreakGlass(t *testing.T) {
	ctx := context.Background()
	off := startWarden(t, nil)
	off.waitReady(t)
	adminSeedTools(t, off.DB)
	if _, err := catalog.Switch(ctx, off.DB, testActor, "issue_refund", false, "INC-1"); err != nil {
		t.Fatal(err)
	}
	e := newBrowser(t, off.URL)
	e.loginDev("erin")
	if p := e.get("/tools/issue_refund/edit"); p.Doc.Find(`[data-testid="break-glass"]`).Length() != 0 {
		t.Error("break glass offered on an installation that does not allow it")
	}
	if p := e.post("/tools/issue_refund/enable", e.withCSRF(url.Values{"break_glass": {"yes"}, "change_reason": {"INC-1 over"}}), nil); p.Status != http.StatusForbidden {
		t.Errorf("break glass where not allowed = %d, want 403", p.Status)
	}
	if tl, _ := catalog.Get(ctx, off.DB.Read(), "issue_refund"); tl.Enabled {
		t.Fatal("refused break glass switched the tool on")
	}

	in, erin := adminSessionEnv(t, "erin", map[string]string{"WARDEN_BREAK_GLASS": "true"})
	if _, err := catalog.Switch(ctx, in.DB, testActor, "issue_refund", false, "INC-1"); err != nil {
		t.Fatal(err)
	}
	// On-call hears of alerts on a webhook.
	erin.post("/notifications/channels", erin.withCSRF(url.Values{"name": {"pager"}, "kind": {notify.Slack}, "url": {"http://127.0.0.1:9/services/T0/B0/hooksecret42"}}), nil)
	var chID string
	if err := in.DB.Read().QueryRow(`SELECT id FROM notify_channels WHERE name = 'pager'`).Scan(&chID); err != nil {
		t.Fatalf("channel: %v", err)
	}
	erin.post("/notifications/routes", erin.withCSRF(url.Values{"event": {"alert"}, "channel": {chID}, "min_severity": {"critical"}}), nil)
	if p := erin.get("/tools/issue_refund/edit"); p.Doc.Find(`[data-testid="break-glass"]`).Length() == 0 {
		t.Error("break glass not offered where the installation allows it")
	}
	if p := erin.post("/tools/issue_refund/enable", erin.withCSRF(url.Values{"break_glass": {"yes"}, "change_reason": {" "}}), nil); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("break glass without a reason = %d, want 422", p.Status)
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); tl.Enabled {
		t.Fatal("break glass without a reason switched the tool on")
	}
	p := erin.post("/tools/issue_refund/enable", erin.withCSRF(url.Values{"break_glass": {"yes"}, "change_reason": {"INC-1 over; provider fixed"}}), nil)
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); !tl.Enabled {
		t.Fatalf("break glass landed on %s (%d) and the tool is still off", p.URL, p.Status)
	}
	if got := text(p, "change-status"); got != "applied by break glass — not yet reviewed" {
		t.Errorf("change status = %q", got)
	}
	evs := adminEvents(t, in.DB, "break_glass")
	if len(evs) != 1 || evs[0].Details["reason"] != "INC-1 over; provider fixed" || evs[0].Details["kind"] != changes.ToolSwitch {
		t.Fatalf("break_glass events = %+v, want one with the reason", evs)
	}
	var n int
	if err := in.DB.Read().QueryRow(`SELECT COUNT(*) FROM notify_deliveries WHERE channel_id = ? AND event = 'alert' AND subject = ?`, chID, evs[0].Subject.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("alert deliveries to on-call = %d (%v), want 1", n, err)
	}
	if home := erin.get("/"); !strings.Contains(text(home, "break-glass-unreviewed"), "Switch on tool issue_refund") {
		t.Errorf("admin home lists %q, want the break-glass change", text(home, "break-glass-unreviewed"))
	}
	// The admin who broke the glass may not review it; frank does.
	id := evs[0].Subject.ID
	if r := erin.post("/changes/"+id+"/review", erin.withCSRF(nil), nil); r.Status != http.StatusForbidden {
		t.Errorf("erin reviewing her own break glass = %d, want 403", r.Status)
	}
	f := newBrowser(t, in.URL)
	f.loginDev("frank")
	if r := f.post("/changes/"+id+"/review", f.withCSRF(url.Values{"note": {"checked"}}), nil); !strings.Contains(text(r, "change-status"), "reviewed by Frank Admin") {
		t.Errorf("after frank's review the change says %q", text(r, "change-status"))
	}
	if home := erin.get("/"); text(home, "break-glass-unreviewed") != "" {
		t.Errorf("admin home still lists %q after review", text(home, "break-glass-unreviewed"))
	}
}

// TestModelUpstreamChangeWaitsForASecondAdmin: pointing a deployment at
// another base URL, or giving it a new upstream key, waits for frank; the
// new key never shows on the change page or in the audit trail, and is
// the one stored once approved. Another edit applies at once.
func TestModelUpstreamChangeWaitsForASecondAdmin(t *testing.T) {
	in, erin := adminSession(t, "erin")
	ctx := context.Background()
	if p := erin.post("/models", erin.withCSRF(modelFormValues("https://llm-a.example.com/v1")), nil); text(p, "notice") != "Deployment added." {
		t.Fatalf("create: %q", text(p, "notice"))
	}
	stored := func() models.Deployment {
		d, err := models.For(ctx, in.DB.Read(), in.Agent.Journeys.Sealer(), "chat")
		if err != nil || len(d) != 1 {
			t.Fatalf("deployments: %v %v", d, err)
		}
		return d[0]
	}
	// Priority only: at once.
	edit := modelFormValues("https://llm-a.example.com/v1")
	edit.Set("priority", "5")
	edit.Del("api_key")
	if p := erin.post("/models/fake-east", erin.withCSRF(edit), nil); text(p, "notice") != "Deployment saved." || stored().Priority != 5 {
		t.Fatalf("a priority edit: notice %q, priority %d; want saved at once", text(p, "notice"), stored().Priority)
	}
	moved := modelFormValues("https://elsewhere.example.net/v1")
	moved.Set("priority", "5")
	moved.Set("api_key", "sk-new-upstream-key-777")
	landed := erin.post("/models/fake-east", erin.withCSRF(moved), nil)
	if d := stored(); d.BaseURL != "https://llm-a.example.com/v1" || d.APIKey != "sk-console-secret-123" {
		t.Fatalf("before approval the deployment is %s with key %q, want unchanged", d.BaseURL, d.APIKey)
	}
	if diff := text(landed, "change-diff"); !strings.Contains(diff, "elsewhere.example.net") || !strings.Contains(diff, "a new key") {
		t.Errorf("the diff reads %q, want the new base URL and that the key changes", diff)
	}
	if strings.Contains(landed.Body, "sk-new-upstream") {
		t.Fatal("the change page shows the new upstream key")
	}
	approveAsFrank(t, in, landed)
	if d := stored(); d.BaseURL != "https://elsewhere.example.net/v1" || d.APIKey != "sk-new-upstream-key-777" {
		t.Errorf("after approval the deployment is %s with key %q", d.BaseURL, d.APIKey)
	}
	for _, verb := range []string{"change.requested", "change.approved", "change.applied", "model.update"} {
		for _, ev := range adminEvents(t, in.DB, verb) {
			if strings.Contains(fmt.Sprint(ev.Details), "sk-new") {
				t.Errorf("%s's details hold the key: %v", verb, ev.Details)
			}
		}
	}
}

// TestPendingChangeNotifiesAdmins: a route for pending changes tells its
// channel when a change waits for a second admin, with a link to it and
// without the requester's free-text reason.
func TestPendingChangeNotifiesAdmins(t *testing.T) {
	in, erin := adminSession(t, "erin")
	ctx := context.Background()
	if _, err := catalog.Switch(ctx, in.DB, testActor, "issue_refund", false, "INC-1"); err != nil {
		t.Fatal(err)
	}
	erin.post("/notifications/channels", erin.withCSRF(url.Values{"name": {"admins"}, "kind": {notify.Slack}, "url": {"http://127.0.0.1:9/services/T0/B0/hooksecret42"}}), nil)
	var chID string
	if err := in.DB.Read().QueryRow(`SELECT id FROM notify_channels WHERE name = 'admins'`).Scan(&chID); err != nil {
		t.Fatalf("channel: %v", err)
	}
	if p := erin.post("/notifications/routes", erin.withCSRF(url.Values{"event": {notify.EventChangePending}, "channel": {chID}}), nil); p.Status != http.StatusOK {
		t.Fatalf("adding a route for pending changes = %d", p.Status)
	}
	landed := erin.post("/tools/issue_refund/enable", erin.withCSRF(url.Values{"change_reason": {"customer Jane Roe 555-0100 asked"}}), nil)
	id := strings.TrimPrefix(landed.URL.Path, "/changes/")
	var msg string
	if err := in.DB.Read().QueryRow(`SELECT message FROM notify_deliveries WHERE channel_id = ? AND event = ? AND subject = ?`,
		chID, notify.EventChangePending, id).Scan(&msg); err != nil {
		t.Fatalf("no delivery of the pending change %s: %v", id, err)
	}
	if !strings.Contains(msg, "/changes/"+id) || !strings.Contains(msg, "Switch on tool issue_refund") || strings.Contains(msg, "Jane") || strings.Contains(msg, "555-0100") {
		t.Errorf("the message is %s; want the summary and link, and not the reason", msg)
	}
	// A tightening change waits for nobody and tells nobody.
	var n int
	erin.post("/tools/issue_refund/disable", erin.withCSRF(url.Values{"reason": {"INC-2"}}), nil)
	if err := in.DB.Read().QueryRow(`SELECT COUNT(*) FROM notify_deliveries WHERE event = ?`, notify.EventChangePending).Scan(&n); err != nil || n != 1 {
		t.Errorf("deliveries of pending changes = %d (%v), want 1", n, err)
	}
}

// TestApprovedChangeAppliesAfterACrash: the approval and the job that
// applies it commit together, so a change approved by a request that died
// before applying it (here: the decision recorded, nothing applied) is
// applied by the job, once.
func TestApprovedChangeAppliesAfterACrash(t *testing.T) {
	in := startWardenDemo(t, nil) // runs the job queue
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	ctx := context.Background()
	if _, err := catalog.Switch(ctx, in.DB, testActor, "issue_refund", false, "INC-1"); err != nil {
		t.Fatal(err)
	}
	landed := erin.post("/tools/issue_refund/enable", erin.withCSRF(url.Values{"change_reason": {"INC-1 over"}}), nil)
	id := strings.TrimPrefix(landed.URL.Path, "/changes/")
	c, err := changes.Get(ctx, in.DB.Read(), id)
	if err != nil {
		t.Fatalf("the pending change %q: %v", id, err)
	}
	frank := identity.Principal{ID: "p-frank-test", Name: "Frank Admin", Email: "frank@test.invalid", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	// The decision as frank's request records it, ApplyGrace ago, and the
	// request dies before applying: the job is due now.
	if _, err := changes.Decide(ctx, in.DB, changes.Decision{Principal: frank, ChangeID: id, Decision: "approve", Digest: c.PayloadDigest},
		time.Now().Add(-changes.ApplyGrace)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		got, _ := changes.Get(ctx, in.DB.Read(), id)
		if got.Status == changes.Applied {
			break
		}
		if time.Now().After(deadline) {
			var st, last string
			in.DB.Read().QueryRow(`SELECT state || ' ' || run_at, COALESCE(last_error, '') FROM jobs WHERE kind = 'apply_change'`).Scan(&st, &last)
			t.Fatalf("the approved change is still %s: the job did not apply it (job %s %s)", got.Status, st, last)
		}
		<-tick.C
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); !tl.Enabled {
		t.Error("the change is marked applied but the tool is still off")
	}
	if v := adminEvents(t, in.DB, "change.applied"); len(v) != 1 {
		t.Errorf("change.applied events = %d, want 1", len(v))
	}
}
