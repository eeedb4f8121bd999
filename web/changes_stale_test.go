package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/tenants"
)

// TestApprovingAnOutOfDateChangeIsRefused drives every kind of the table:
// erin asks for a loosening change; frank's page offers the approval;
// then the object moves by a direct edit (on-call tightening it, another
// admin's edit). Frank's page and the Changes list now say the change is
// out of date, and the page offers only Reject; approving it anyway is a 409 that says what the
// object was and is now, the change stays pending and the object keeps
// its moved value, and the auditor finds the refused approval (by frank,
// without values) on the audit trail. Rejecting it still works.
func TestApprovingAnOutOfDateChangeIsRefused(t *testing.T) {
	in, _, rbFile := startWithRunbook(t, pauseRunbook, nil)
	ctx := context.Background()
	adminSeedTools(t, in.DB)
	mcpRegistered(t, in, "shop")
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	frank := newBrowser(t, in.URL)
	frank.loginDev("frank")
	frankID := principalID(t, in.DB, "dev-frank")
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	acme := adminTenantBySlug(t, in.DB, "acme")
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	k, _ := newKey(t, in, "stale-bot", []string{"tool:lookup_order", "skill:refunds"}, 600, 60, nil)
	_, err := models.SetKeyLimits(ctx, in.DB, testActor, k, models.KeyLimits{RPM: 10, TPM: 5000})
	must("key limits", err)
	if p := erin.post("/models", erin.withCSRF(modelFormValues("https://llm-a.example.com/v1")), nil); text(p, "notice") != "Deployment added." {
		t.Fatalf("create deployment: %q", text(p, "notice"))
	}
	_, err = alerts.SetRule(ctx, in.DB, testActor, alerts.Rule{Skill: "refunds", FailurePercent: 10, P99Latency: 2500 * time.Millisecond,
		Window: 10 * time.Minute, MinJourneys: 5}, time.Now())
	must("alert rule", err)
	_, err = routelabels.SetSettings(ctx, in.DB, testActor, routelabels.Settings{SamplePercent: 5, AlertPercent: 80, AlertLastN: 50}, time.Now())
	must("label settings", err)

	// A release whose prompt differs from the active one, for release.activate.
	active := demoHistory(t, in)[0].Digest
	cur, err := releases.Get(ctx, in.DB.Read(), active)
	must("active release", err)
	body := `{"model":"` + cur.Bundle.Model + `","routing":"` + cur.Bundle.Routing + `","tools":"` + cur.Bundle.Tools +
		`","approval":"` + cur.Bundle.Approval + `","skills":"` + cur.Bundle.Skills +
		`","contents":{"prompt":"You are the shop's support agent. Answer in one short sentence."}}`
	pub := erin.noRedirect().post("/releases/publish", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"bundle": {body}, "note": {"shorter answers"}}), nil)
	target, _ := url.ParseQuery(strings.TrimPrefix(pub.Header.Get("Location"), "/releases/activate?"))
	candidate := target.Get("digest")
	if pub.Status != http.StatusSeeOther || candidate == "" {
		t.Fatalf("publish = %d to %q", pub.Status, pub.Header.Get("Location"))
	}

	toolForm := func(impact string) url.Values {
		form := toolFormValues()
		form.Set("description", "Refund an order")
		form.Set("reversibility", "irreversible")
		form.Set("impact", impact)
		return form
	}
	tool := func(name string) toolState {
		tl, err := catalog.Get(ctx, in.DB.Read(), name)
		must("tool "+name, err)
		return toolState{on: tl.Enabled, impact: tl.Impact}
	}
	key := func() keys.Key {
		got, err := keys.ByID(ctx, in.DB.Read(), k.ID)
		must("key", err)
		return got
	}
	b := func(v bool) string { return strconv.FormatBool(v) }

	kinds := []struct {
		kind  string
		setup func()        // puts the object where the change loosens it
		path  string        // the console form erin asks with
		form  url.Values    // (nil: none)
		move  func()        // the direct edit that moves the object meanwhile
		value func() string // the object as the test reads it
	}{
		{changes.DualControl, nil, "/tenants/acme/dual-control", url.Values{"currency": {"USD"}, "dual_control": {"1000000.00"}},
			func() {
				_, err := tenants.SetThreshold(ctx, in.DB, testActor, acme.ID, tenants.Threshold{Currency: "USD", Minor: 50_000})
				must("lower", err)
			},
			func() string {
				m, _ := tenants.ThresholdFor(ctx, in.DB.Read(), acme.ID, "USD")
				return strconv.FormatInt(m, 10)
			}},
		{changes.DualControlWindow, nil, "/tenants/acme/dual-control-window", url.Values{"window_hours": {"1"}},
			func() {
				_, err := tenants.SetDualControlWindow(ctx, in.DB, testActor, acme.ID, 48)
				must("lengthen", err)
			},
			func() string { return strconv.Itoa(int(adminTenantBySlug(t, in.DB, "acme").DualControlWindow.Hours())) }},
		{changes.ToolRisk, nil, "/tools/issue_refund", toolForm("low"),
			func() {
				tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund")
				tl.Impact = risk.ImpactMedium
				_, err := catalog.Update(ctx, in.DB, testActor, tl)
				must("medium", err)
			},
			func() string { return string(tool("issue_refund").impact) }},
		{changes.ToolSwitch, func() {
			_, err := catalog.Switch(ctx, in.DB, testActor, "lookup_order", false, "INC-1")
			must("off", err)
		},
			"/tools/lookup_order/enable", url.Values{},
			func() {
				_, err := catalog.Switch(ctx, in.DB, testActor, "lookup_order", true, "INC-1 over")
				must("on", err)
			},
			func() string { return b(tool("lookup_order").on) }},
		{changes.ToolTenantSwitch, func() {
			_, err := catalog.SwitchForTenant(ctx, in.DB, testActor, "shop__lookup_order", acme.ID, "acme", false, "INC-2")
			must("off for acme", err)
		}, "/switches/tool/shop__lookup_order/tenants/acme/on", url.Values{},
			func() {
				_, err := catalog.SwitchForTenant(ctx, in.DB, testActor, "shop__lookup_order", acme.ID, "acme", true, "INC-2 over")
				must("on for acme", err)
			},
			func() string {
				off, _ := catalog.OffForTenant(ctx, in.DB.Read(), "shop__lookup_order", acme.ID)
				return b(!off)
			}},
		{changes.SkillSwitch, func() {
			if p := erin.post("/switches/skills/refunds/off", erin.withCSRF(url.Values{"reason": {"INC-3"}}), nil); p.Status != http.StatusOK {
				t.Fatalf("switching refunds off = %d", p.Status)
			}
		}, "/switches/skills/refunds/on", url.Values{},
			func() {
				_, err := catalog.SwitchSkill(ctx, in.DB, testActor, "refunds", true, "INC-3 over")
				must("skill on", err)
			},
			func() string { on, _ := catalog.SkillEnabled(ctx, in.DB.Read(), "refunds"); return b(on) }},
		{changes.BudgetLimit, func() {
			_, err := budgets.SetAudited(ctx, in.DB, testActor, budgets.Spec{TenantID: acme.ID, Period: budgets.Day, LimitMicros: 10_000_000, AlertPercent: 80}, time.Now())
			must("budget", err)
		}, "/budgets/acme", url.Values{"period": {"day"}, "limit": {"500"}, "alert_percent": {"80"}},
			func() {
				_, err := budgets.SetAudited(ctx, in.DB, testActor, budgets.Spec{TenantID: acme.ID, Period: budgets.Day, LimitMicros: 5_000_000, AlertPercent: 80}, time.Now())
				must("lower budget", err)
			},
			func() string {
				bu, _ := budgets.Get(ctx, in.DB.Read(), acme.ID)
				return strconv.FormatInt(bu.LimitMicros, 10)
			}},
		{changes.ModelUpstream, nil, "/models/fake-east", func() url.Values {
			f := modelFormValues("https://elsewhere.example.net/v1")
			f.Del("api_key")
			return f
		}(),
			func() {
				d, err := models.Get(ctx, in.DB.Read(), "fake-east")
				must("deployment", err)
				d.BaseURL = "https://llm-b.example.com/v1"
				_, err = models.Update(ctx, in.DB, in.Agent.Journeys.Sealer(), testActor, d, "")
				must("move upstream", err)
			},
			func() string { d, _ := models.Get(ctx, in.DB.Read(), "fake-east"); return d.BaseURL }},
		{changes.AllowHost, nil, "/model-allowed-hosts", url.Values{"allowed_hosts": {"127.0.0.1\nllm.corp.internal"}},
			func() { _, err := models.SetAllowedHosts(ctx, in.DB, testActor, nil); must("no hosts", err) },
			func() string { h, _ := models.AllowedHosts(ctx, in.DB.Read()); return strings.Join(h, " ") }},
		{changes.MCPServerSwitch, func() {
			_, err := mcpservers.SwitchServer(ctx, in.DB, testActor, "shop", false, "INC-4")
			must("server off", err)
		},
			"/switches/mcp-servers/shop/on", url.Values{},
			func() {
				_, err := mcpservers.SwitchServer(ctx, in.DB, testActor, "shop", true, "INC-4 over")
				must("server on", err)
			},
			func() string { s, _ := mcpservers.Get(ctx, in.DB.Read(), "shop"); return b(s.Enabled) }},
		{changes.MCPToolSwitch, func() {
			_, err := mcpservers.SetToolEnabled(ctx, in.DB, testActor, "shop", "pay", false, "INC-5")
			must("pay off", err)
		},
			"/switches/mcp-tools/shop__pay/on", url.Values{},
			func() {
				_, err := mcpservers.SetToolEnabled(ctx, in.DB, testActor, "shop", "pay", true, "INC-5 over")
				must("pay on", err)
			},
			func() string { tl, _ := mcpservers.GetTool(ctx, in.DB.Read(), "shop", "pay"); return b(tl.Enabled) }},
		{changes.KeyRateLimit, nil, "/keys/" + k.ID + "/model-limits", url.Values{"model_rpm": {"20"}, "model_tpm": {"5000"}},
			func() {
				_, err := models.SetKeyLimits(ctx, in.DB, testActor, key(), models.KeyLimits{RPM: 5, TPM: 5000})
				must("lower rpm", err)
			},
			func() string { l, _ := models.KeyLimitsOf(ctx, in.DB.Read(), k.ID); return strconv.Itoa(l.RPM) }},
		{changes.KeyScopes, nil, "/keys/" + k.ID + "/scopes", url.Values{"scopes": {"tool:lookup_order", "skill:refunds", "tool:issue_refund"}},
			func() {
				_, err := keys.SetScopes(ctx, in.DB, testActor, k.ID, []string{"tool:lookup_order"})
				must("narrow", err)
			},
			func() string { return strings.Join(key().Scopes, " ") }},
		{changes.KeyRequestRate, nil, "/keys/" + k.ID + "/rate", url.Values{"rate_per_min": {"1200"}, "burst": {"60"}},
			func() { _, err := keys.SetRate(ctx, in.DB, testActor, k.ID, 300, 30); must("slower", err) },
			func() string { return strconv.Itoa(key().RatePerMin) }},
		{changes.KeyExpiry, func() {
			in30 := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 30)
			_, err := keys.SetExpiry(ctx, in.DB, testActor, k.ID, &in30, time.Now())
			must("expiry", err)
		}, "/keys/" + k.ID + "/expiry", url.Values{"expires_at": {""}},
			func() {
				in10 := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 10)
				_, err := keys.SetExpiry(ctx, in.DB, testActor, k.ID, &in10, time.Now())
				must("earlier expiry", err)
			},
			func() string { return changes.ExpiryValue(key().ExpiresAt).ExpiresAt }},
		{changes.ReleaseActivate, nil, "/releases/activate", url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
			"from": {active}, "digest": {candidate}, "reason": {"shorter answers"}},
			func() {
				_, _, err := releases.ActivateConfirmed(ctx, in.DB, releases.Author{Actor: testActor, Name: "Test"},
					releases.Move{Agent: releases.DefaultAgent, Env: releases.DefaultEnv, From: active, To: candidate, Reason: "by hand"})
				must("activate by hand", err)
			},
			func() string {
				p, _ := releases.Active(ctx, in.DB.Read(), releases.DefaultAgent, releases.DefaultEnv)
				return p.Digest
			}},
		{changes.OwnerChange, nil, "/owners/" + owners.Tool + "/issue_refund", url.Values{"owner": {"group:payments"}},
			func() {
				must("owner", owners.Set(ctx, in.DB, testActor, owners.Tool, "issue_refund", "ana@example.com"))
			},
			func() string { o, _ := owners.Get(ctx, in.DB.Read(), owners.Tool, "issue_refund"); return o }},
		{changes.RunbookPublish, nil, "/runbooks/pause-refunds/publish", url.Values{},
			func() {
				// Another admin published the buttons meanwhile (break glass).
				set, problems := runbooks.Load(os.DirFS(filepath.Dir(rbFile)))
				if len(problems) > 0 {
					t.Fatal(problems)
				}
				rb, _ := set.Get("pause-refunds")
				pr, err := runbooks.PublishProposal(ctx, in.DB.Read(), rb)
				must("proposal", err)
				must("publish by hand", runbooks.Publish(ctx, in.DB, set, runbooks.Publisher{ID: "test"}, pr.After.(changes.Buttons)))
			},
			func() string {
				n := countRows(t, in.DB, `SELECT COUNT(*) FROM runbook_buttons`)
				return strconv.Itoa(n)
			}},
		{changes.AlertRule, nil, "/alerts/rules/refunds", url.Values{"failure_percent": {"50"}, "p99_ms": {"2500"}, "window_minutes": {"10"}, "min_journeys": {"5"}},
			func() {
				_, err := alerts.SetRule(ctx, in.DB, testActor, alerts.Rule{Skill: "refunds", FailurePercent: 5, P99Latency: 2500 * time.Millisecond,
					Window: 10 * time.Minute, MinJourneys: 5}, time.Now())
				must("stricter rule", err)
			},
			func() string {
				rules, _ := alerts.Rules(ctx, in.DB.Read())
				return strconv.Itoa(alerts.RuleFor(rules, "refunds").FailurePercent)
			}},
		{changes.RouteAccuracy, nil, "/labels/settings", url.Values{"sample_percent": {"5"}, "alert_percent": {"60"}, "alert_last_n": {"50"}},
			func() {
				_, err := routelabels.SetSettings(ctx, in.DB, testActor, routelabels.Settings{SamplePercent: 5, AlertPercent: 90, AlertLastN: 50}, time.Now())
				must("stricter settings", err)
			},
			func() string { s, _ := routelabels.GetSettings(ctx, in.DB.Read()); return strconv.Itoa(s.AlertPercent) }},
		{changes.TenantFreeze, func() {
			_, err := tenants.SetFrozen(ctx, in.DB, testActor, acme.ID, true, "INC-6")
			must("freeze", err)
		},
			"/tenants/acme/unfreeze", url.Values{},
			func() {
				_, err := tenants.SetFrozen(ctx, in.DB, testActor, acme.ID, false, "INC-6 over")
				must("unfreeze", err)
			},
			func() string { return b(adminTenantBySlug(t, in.DB, "acme").Frozen) }},
	}
	covered := map[string]bool{}
	for _, k := range kinds {
		covered[k.kind] = true
		if k.setup != nil {
			k.setup()
		}
		form := k.form
		form.Set("change_reason", "INC-42 "+k.kind)
		landed := erin.post(k.path, erin.withCSRF(form), nil)
		if !strings.HasPrefix(landed.URL.Path, "/changes/chg_") {
			t.Errorf("%s: asking landed on %s (%d), want a pending change", k.kind, landed.URL, landed.Status)
			continue
		}
		id := strings.TrimPrefix(landed.URL.Path, "/changes/")
		if c, _ := changes.Get(ctx, in.DB.Read(), id); c.Kind != k.kind {
			t.Errorf("%s: the pending change is a %s", k.kind, c.Kind)
			continue
		}
		// Until the object moves, frank may approve it.
		fresh := frank.get(landed.URL.Path)
		if fresh.Doc.Find(`[data-testid="change-approve"]`).Length() != 1 || text(fresh, "change-out-of-date") != "" {
			t.Errorf("%s: before the object moved frank's page offers approve %d times and says %q", k.kind,
				fresh.Doc.Find(`[data-testid="change-approve"]`).Length(), text(fresh, "change-out-of-date"))
		}
		digest, _ := fresh.Doc.Find(`input[name="digest"]`).Attr("value")
		inQueue := `[data-testid="changes-pending"] [data-testid="change-` + id + `"] [data-testid="change-out-of-date"]`
		if n := frank.get("/changes").Doc.Find(inQueue).Length(); n != 0 {
			t.Errorf("%s: before the object moved the Changes list marks the change out of date", k.kind)
		}

		k.move()
		moved := k.value()
		page := frank.get(landed.URL.Path)
		if text(page, "change-out-of-date") != "out of date" || !strings.Contains(text(page, "change-out-of-date-why"), "changed since the change was asked") ||
			page.Doc.Find(`[data-testid="change-approve"]`).Length() != 0 || page.Doc.Find(`[data-testid="change-reject"]`).Length() != 1 {
			t.Errorf("%s: after the object moved frank's page says %q / %q, approve offered %d times; want out of date and reject only", k.kind,
				text(page, "change-out-of-date"), text(page, "change-out-of-date-why"), page.Doc.Find(`[data-testid="change-approve"]`).Length())
		}
		if n := frank.get("/changes").Doc.Find(inQueue).Length(); n != 1 {
			t.Errorf("%s: after the object moved the Changes list does not mark the change out of date", k.kind)
		}
		p := frank.post(landed.URL.Path+"/decide", frank.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil)
		if p.Status != http.StatusConflict || !strings.Contains(p.Body, "changed since the change was asked") || !strings.Contains(p.Body, "Reject this change and ask again") {
			t.Errorf("%s: approving the out-of-date change = %d, want 409 saying it changed since it was asked:\n%s", k.kind, p.Status, text(p, "error-summary"))
		}
		if c, _ := changes.Get(ctx, in.DB.Read(), id); c.Status != changes.Pending {
			t.Errorf("%s: after the refused approval the change is %s, want still pending", k.kind, c.Status)
		}
		if got := k.value(); got != moved {
			t.Errorf("%s: the refused approval changed the object from %s to %s", k.kind, moved, got)
		}
		// The auditor finds the refused approval on the audit trail: by
		// frank, on this change, with why, and no value.
		trail := dave.get("/audit?" + url.Values{"verb": {"change.approval_refused"}, "subject_type": {"change"}, "subject_id": {id}}.Encode())
		rows := trail.Doc.Find(`[data-testid="audit-table"] tbody tr[data-testid^="audit-event-"]`)
		sentence := strings.TrimSpace(rows.Find(`[data-testid="event-sentence"]`).Text())
		if rows.Length() != 1 || !strings.HasPrefix(sentence, "Frank Admin tried to approve the change and was refused (what it changes was edited since the change was asked") {
			t.Errorf("%s: the audit trail lists %d refused approvals of the change, saying %q; want one by Frank Admin", k.kind, rows.Length(), sentence)
		}
		var refused []audit.Event
		for _, ev := range adminEvents(t, in.DB, "change.approval_refused") {
			if ev.Subject.ID == id {
				refused = append(refused, ev)
			}
		}
		if len(refused) != 1 || refused[0].Actor.ID != frankID || refused[0].Details["reason"] != "changed_since_asked" ||
			refused[0].Details["kind"] != k.kind || refused[0].Details["before"] != nil || refused[0].Details["after"] != nil {
			t.Errorf("%s: change.approval_refused events of the change = %+v; want one by frank (%s), reason changed_since_asked, kind, no values", k.kind, refused, frankID)
		}
		r := frank.post(landed.URL.Path+"/decide", frank.withCSRF(url.Values{"decision": {"reject"}, "comment": {"out of date; ask again"}, "digest": {digest}}), nil)
		if c, _ := changes.Get(ctx, in.DB.Read(), id); c.Status != changes.Rejected || !strings.Contains(text(r, "change-status"), "rejected by") {
			t.Errorf("%s: rejecting the out-of-date change: %s, page %q", k.kind, c.Status, text(r, "change-status"))
		}
		if got := k.value(); got != moved {
			t.Errorf("%s: rejecting changed the object from %s to %s", k.kind, moved, got)
		}
	}
	for _, kd := range changes.Table {
		if !covered[kd.Name] {
			t.Errorf("kind %s is not covered", kd.Name)
		}
	}
	if n := len(adminEvents(t, in.DB, "change.approval_refused")); n != len(changes.Table) {
		t.Errorf("change.approval_refused events = %d, want one for each of the %d kinds (the rejections record none)", n, len(changes.Table))
	}
	if n := len(adminEvents(t, in.DB, "change.approved")); n != 0 {
		t.Errorf("change.approved events = %d, want none", n)
	}
}

type toolState struct {
	on     bool
	impact risk.Impact
}
