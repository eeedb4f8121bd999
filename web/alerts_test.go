package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
)

// failRefunds records 25 failed refunds journeys in the last minute and
// evaluates the alert rules, so the refunds failure-rate alert fires.
func failRefunds(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	var tenantID string
	if err := db.Read().QueryRow(`SELECT id FROM tenants ORDER BY slug LIMIT 1`).Scan(&tenantID); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if _, err := db.Read().Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, skill, release_digest, status, latency_ms, created_at)
			VALUES (?, ?, 'r', 'c', 'refunds', 'sha256:x', ?, 100, ?)`, fmt.Sprint("jfail", i), tenantID, journeys.StatusFailed, store.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alerts.Evaluate(ctx, db, time.Now()); err != nil {
		t.Fatal(err)
	}
}

const refundsAlert = `[data-testid="alert-failure_rate-refunds"]`

func TestAlertPagesForOncall(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if home := carol.get("/"); home.Doc.Find(`[data-testid="home-alerts"]`).Length() != 0 {
		t.Errorf("home lists alerts while none fire")
	}
	if p := carol.get("/alerts"); p.Status != http.StatusOK || p.Doc.Find(`[data-testid="alerts-firing-none"]`).Length() != 1 {
		t.Errorf("GET /alerts = %d, want 200 saying none fire", p.Status)
	}

	failRefunds(t, in.DB)
	home := carol.get("/")
	if home.Doc.Find(`nav a[href="/alerts"]`).Length() != 1 {
		t.Errorf("carol's navigation does not offer Alerts")
	}
	li := home.Doc.Find(`[data-testid="home-alert-failure_rate-refunds"]`)
	if href, _ := li.Find(`a[data-testid="alert-runbook"]`).Attr("href"); !strings.HasPrefix(href, "/runbooks/tool-provider-outage?alert=") {
		t.Errorf("home alert runbook link = %q, want /runbooks/tool-provider-outage?alert=… (home: %q)", href, li.Text())
	}
	p := carol.get("/alerts")
	row := p.Doc.Find(`[data-testid="alerts-firing"] ` + refundsAlert)
	if p.Status != http.StatusOK || row.Length() != 1 {
		t.Fatalf("GET /alerts = %d; firing row for refunds: %d", p.Status, row.Length())
	}
	if got := row.Find(`[data-testid="alert-value"]`).Text(); got != "100% (threshold 20%)" {
		t.Errorf("value = %q, want 100%% (threshold 20%%)", got)
	}
	if href, _ := row.Find(`a[data-testid="alert-runbook"]`).Attr("href"); !strings.HasPrefix(href, "/runbooks/tool-provider-outage?alert=") {
		t.Errorf("runbook link = %q", href)
	}
	// On-call reads the thresholds but cannot change them.
	if p.Doc.Find(`[data-testid="alert-rule-refunds"]`).Length() != 1 || p.Doc.Find(`form[data-testid^="alert-rule-form-"]`).Length() != 0 {
		t.Errorf("carol: rules shown %d, forms %d; want the rules without forms",
			p.Doc.Find(`[data-testid="alert-rule-refunds"]`).Length(), p.Doc.Find(`form[data-testid^="alert-rule-form-"]`).Length())
	}
	before := auditCount(t, in.DB)
	form := carol.withCSRF(url.Values{"failure_percent": {"50"}, "p99_ms": {"1000"}, "window_minutes": {"15"}, "min_journeys": {"5"}})
	if p := carol.post("/alerts/rules/refunds", form, nil); p.Status != http.StatusForbidden {
		t.Errorf("carol: POST /alerts/rules/refunds = %d, want 403", p.Status)
	}
	if auditCount(t, in.DB) != before {
		t.Errorf("a refused rule change was recorded")
	}
}

func TestAlertPagesRefuseApproversAndAuditors(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	failRefunds(t, in.DB)
	for _, user := range []string{"alice", "dave"} {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		home := b.get("/")
		if home.Doc.Find(`nav a[href="/alerts"]`).Length() != 0 || home.Doc.Find(`[data-testid="home-alerts"]`).Length() != 0 {
			t.Errorf("%s: home offers Alerts or lists alerts", user)
		}
		if p := b.get("/alerts"); p.Status != http.StatusForbidden {
			t.Errorf("%s: GET /alerts = %d, want 403", user, p.Status)
		}
	}
}

func TestAlertRuleFormForAdmins(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	ctx := context.Background()

	before, recorded := auditCount(t, in.DB), changeCount(t, in.DB)
	for _, tt := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"failure_percent": {"0"}, "p99_ms": {"1000"}, "window_minutes": {"15"}, "min_journeys": {"5"}}, "failure_percent"},
		{url.Values{"failure_percent": {"ten"}, "p99_ms": {"1000"}, "window_minutes": {"15"}, "min_journeys": {"5"}}, "failure_percent"},
		{url.Values{"failure_percent": {"10"}, "p99_ms": {"99999999999999"}, "window_minutes": {"15"}, "min_journeys": {"5"}}, "p99_ms"},
		{url.Values{"failure_percent": {"10"}, "p99_ms": {"1000"}, "window_minutes": {"0"}, "min_journeys": {"5"}}, "window_minutes"},
		{url.Values{"failure_percent": {"10"}, "p99_ms": {"1000"}, "window_minutes": {"15"}, "min_journeys": {""}}, "min_journeys"},
	} {
		p := erin.post("/alerts/rules/refunds", erin.withCSRF(tt.form), nil)
		form := p.Doc.Find(`[data-testid="alert-rule-form-refunds"]`)
		if p.Status != http.StatusUnprocessableEntity || form.Find(`[data-testid="error-`+tt.field+`"]`).Length() != 1 {
			t.Errorf("POST %v = %d, want 422 with an error on %s", tt.form, p.Status, tt.field)
		}
		if v, _ := form.Find(`input[name="` + tt.field + `"]`).Attr("value"); v != tt.form.Get(tt.field) {
			t.Errorf("POST %v: %s shows %q, want the input kept", tt.form, tt.field, v)
		}
	}
	if auditCount(t, in.DB) != before || changeCount(t, in.DB) != recorded {
		t.Errorf("refused rules were recorded (as an audit event or a pending change)")
	}
	if rules, err := alerts.Rules(ctx, in.DB.Read()); err != nil || len(rules) != 0 {
		t.Errorf("refused rules were stored: %v, %v", rules, err)
	}
	if p := erin.post("/alerts/rules/no_such_skill", erin.withCSRF(url.Values{"failure_percent": {"10"}, "p99_ms": {"1000"}, "window_minutes": {"15"}, "min_journeys": {"5"}}), nil); p.Status != http.StatusNotFound {
		t.Errorf("POST for an unknown skill = %d, want 404", p.Status)
	}

	// Lowering every threshold (from the default 20%, 10000 ms, 15 min,
	// 20 journeys) applies at once.
	if f := erin.get("/alerts").Doc.Find(`[data-testid="alert-rule-form-refunds"] [data-testid="needs-second-admin"]`); f.Length() != 1 {
		t.Error("the thresholds form does not say raising one needs a second admin")
	}
	p := erin.post("/alerts/rules/refunds", erin.withCSRF(url.Values{"failure_percent": {"10"}, "p99_ms": {"2500"}, "window_minutes": {"10"}, "min_journeys": {"5"}}), nil)
	if p.Status != http.StatusOK || p.URL.Path != "/alerts" || text(p, "notice") == "" {
		t.Fatalf("saving = %d at %s, notice %q; want the Alerts page with a notice", p.Status, p.URL.Path, text(p, "notice"))
	}
	row := p.Doc.Find(`[data-testid="alert-rule-refunds"]`)
	if got := row.Find(`[data-testid="rule-failure"]`).Text() + " " + row.Find(`[data-testid="rule-p99"]`).Text(); got != "10% 2500 ms" {
		t.Errorf("refunds rule shows %q, want 10%% 2500 ms", got)
	}
	ev := lastAudit(t, in.DB)
	if ev.Verb != "alert.rule_set" || ev.Subject.ID != "refunds" || ev.Actor.ID != principalID(t, in.DB, "dev-erin") {
		t.Errorf("last event = %s %v by %v, want alert.rule_set refunds by erin", ev.Verb, ev.Subject, ev.Actor)
	}
	if n := changeCount(t, in.DB); n != recorded {
		t.Errorf("lowering the thresholds recorded %d changes, want none", n-recorded)
	}
	failure := func() int {
		t.Helper()
		rules, err := alerts.Rules(ctx, in.DB.Read())
		if err != nil {
			t.Fatal(err)
		}
		return alerts.RuleFor(rules, "refunds").FailurePercent
	}

	// Raising the failure threshold makes the alert quieter: it waits for
	// a second admin, erin may not approve it herself, frank does.
	landed := erin.post("/alerts/rules/refunds", erin.withCSRF(url.Values{"failure_percent": {"50"}, "p99_ms": {"2500"}, "window_minutes": {"10"}, "min_journeys": {"5"}, "change_reason": {"noisy"}}), nil)
	if got := failure(); got != 10 {
		t.Fatalf("raising the failure threshold applied before a second admin approved: %d%%", got)
	}
	chID := strings.TrimPrefix(landed.URL.Path, "/changes/")
	c, err := changes.Get(ctx, in.DB.Read(), chID)
	if err != nil || c.Kind != changes.AlertRule || c.Subject != "refunds" {
		t.Fatalf("raising landed on %s: %+v %v", landed.URL.Path, c, err)
	}
	if got := text(landed, "change-summary"); got != "Change skill refunds's alert thresholds from failure rate 10%, p99 2500 ms, window 10 min, minimum 5 journeys to failure rate 50%, p99 2500 ms, window 10 min, minimum 5 journeys" {
		t.Errorf("change summary = %q", got)
	}
	if row := landed.Doc.Find(`[data-testid="diff-failure percent"]`); row.Find(`[data-testid="diff-before"]`).Text() != "10" || row.Find(`[data-testid="diff-after"]`).Text() != "50" || !strings.Contains(row.Text(), "failure rate (%)") {
		t.Errorf("the diff's failure row reads %q", row.Text())
	}
	if own := erin.post("/changes/"+chID+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own raise = %d, want 403", own.Status)
	}
	if got := failure(); got != 10 {
		t.Fatalf("erin's own approval changed the rule: %d%%", got)
	}
	if p := erin.get("/alerts"); p.Doc.Find(`[data-testid="pending-changes"] a[href="/changes/`+chID+`"]`).Length() != 1 {
		t.Error("the Alerts page does not show the pending raise")
	}
	// On-call see it too, as words: the change's page is the admins'.
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if p := carol.get("/alerts"); !strings.Contains(text(p, "pending-change-summary"), "refunds's alert thresholds") ||
		!strings.Contains(text(p, "pending-changes"), "asked by Erin Admin") || p.Doc.Find(`[data-testid="pending-changes"] a`).Length() != 0 {
		t.Errorf("on-call's Alerts page shows the pending raise as %q, want its summary and who asked, without a link", text(p, "pending-changes"))
	}
	// So do on-call of one tenant: the thresholds are the installation's,
	// shown to them on this page, and so is the raise asked for them.
	acmeOncall := &identity.Principal{ID: "p-acme-oncall", Name: "Acme On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB, Runtime: in.Agent.Journeys, Sealer: in.Agent.Journeys.Sealer()}
	rec, err := callAs(t, h.AlertList, acmeOncall, http.MethodGet, "/alerts", nil)
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /alerts as acme's on-call = %d, %v", rec.Code, err)
	}
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Find(`[data-testid="alert-rule-refunds"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="pending-change-summary"]`).Text(), "refunds's alert thresholds") ||
		!strings.Contains(doc.Find(`[data-testid="pending-changes"]`).Text(), "asked by Erin Admin") ||
		doc.Find(`[data-testid="pending-changes"] a`).Length() != 0 || doc.Find(`form[data-testid^="alert-rule-form-"]`).Length() != 0 {
		t.Errorf("acme's on-call's Alerts page shows refunds's thresholds %d times and the pending raise as %q; want the thresholds and the raise as words, no link or form",
			doc.Find(`[data-testid="alert-rule-refunds"]`).Length(), strings.TrimSpace(doc.Find(`[data-testid="pending-changes"]`).Text()))
	}
	approveAsFrank(t, in, landed)
	if got := failure(); got != 50 {
		t.Fatalf("after frank approved, the failure threshold is %d%%, want 50%%", got)
	}
	row = erin.get("/alerts").Doc.Find(`[data-testid="alert-rule-refunds"]`)
	if got := row.Find(`[data-testid="rule-failure"]`).Text(); got != "50%" {
		t.Errorf("after approval the refunds rule shows %q, want 50%%", got)
	}
	if ev := lastAuditOf(t, in, "alert.rule_set", "refunds"); fmt.Sprint(ev.Details["failure_percent"]) != "50" || ev.Actor.ID != principalID(t, in.DB, "dev-erin") {
		t.Errorf("the approved raise was not recorded as alert.rule_set by erin: %v by %v", ev.Details, ev.Actor)
	}

	// A raise approved after the thresholds were lowered meanwhile is
	// refused: the before frank was shown is no longer true.
	landed = erin.post("/alerts/rules/refunds", erin.withCSRF(url.Values{"failure_percent": {"90"}, "p99_ms": {"2500"}, "window_minutes": {"10"}, "min_journeys": {"5"}}), nil)
	if p := erin.post("/alerts/rules/refunds", erin.withCSRF(url.Values{"failure_percent": {"30"}, "p99_ms": {"2500"}, "window_minutes": {"10"}, "min_journeys": {"5"}}), nil); p.URL.Path != "/alerts" || failure() != 30 {
		t.Fatalf("lowering to 30%% landed on %s, threshold %d%%", p.URL.Path, failure())
	}
	frank := newBrowser(t, in.URL)
	frank.loginDev("frank")
	digest := frank.get(landed.URL.Path).Doc.Find(`input[name="digest"]`).AttrOr("value", "")
	p = frank.post(landed.URL.Path+"/decide", frank.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil)
	if c, err := changes.Get(ctx, in.DB.Read(), strings.TrimPrefix(landed.URL.Path, "/changes/")); err != nil || p.Status != http.StatusConflict ||
		c.Status != changes.Pending || !strings.Contains(p.Body, "failure rate (%): 30") || failure() != 30 {
		t.Errorf("approving a raise of thresholds lowered meanwhile: %d, %s %v, threshold %d%%; want 409, still pending", p.Status, c.Status, err, failure())
	}
}

// TestAlertDetailAndAck: the alert page says why it fired, links to the
// failing journeys (a Traces list that shows exactly them), names its
// owner, and on-call acknowledges it once through a CSRF-checked POST;
// approvers may not; the acknowledged alert moves after the unacknowledged
// ones on the home page; and erin (admin) sees the firing alert on her
// home page too.
func TestAlertDetailAndAck(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	failRefunds(t, in.DB)
	var alertID string
	if err := in.DB.Read().QueryRow(`SELECT id FROM alerts WHERE kind = 'failure_rate' AND subject = 'refunds'`).Scan(&alertID); err != nil {
		t.Fatal(err)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	home := carol.get("/")
	href, _ := home.Doc.Find(`[data-testid="home-alert-failure_rate-refunds"] a[data-testid="home-alert-link"]`).Attr("href")
	if href != "/alerts/"+alertID || home.Doc.Find(`[data-testid="home-alert-failure_rate-refunds"] [data-testid="home-alert-unacked"]`).Length() != 1 {
		t.Fatalf("home links the alert at %q (want /alerts/%s) and marks it unacknowledged: %q", href, alertID, home.Doc.Find(`[data-testid="home-alerts"]`).Text())
	}
	p := carol.get(href)
	if p.Status != http.StatusOK || text(p, "alert-title") != "Failure rate of skill refunds" {
		t.Fatalf("alert page = %d %q", p.Status, text(p, "alert-title"))
	}
	if got := text(p, "alert-owner"); got != "platform-oncall" {
		t.Errorf("owner = %q, want the runbook's owner platform-oncall", got)
	}
	if p.Doc.Find(`[data-testid="alert-codes"] tbody tr`).Length() != 1 || !strings.Contains(text(p, "alert-fault"), "25 of 25 journeys") {
		t.Errorf("cause = %q / %q", text(p, "alert-fault"), p.Doc.Find(`[data-testid="alert-codes"]`).Text())
	}
	jh, _ := p.Doc.Find(`[data-testid="alert-journeys"]`).Attr("href")
	traces := carol.get(jh)
	if traces.Status != http.StatusOK || traces.Doc.Find(`[data-testid^="trace-jfail"]`).Length() != 25 || traces.Doc.Find(`[data-testid="traces-table"] tbody tr`).Length() != 25 {
		t.Errorf("failing journeys link %q = %d with %d rows, want the 25 failed refunds", jh, traces.Status, traces.Doc.Find(`[data-testid="traces-table"] tbody tr`).Length())
	}

	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	before := auditCount(t, in.DB)
	if r := alice.post("/alerts/"+alertID+"/ack", alice.withCSRF(url.Values{"note": {"mine"}}), nil); r.Status != http.StatusForbidden {
		t.Errorf("alice acknowledges = %d, want 403", r.Status)
	}
	if r := carol.post("/alerts/"+alertID+"/ack", url.Values{"note": {"no csrf"}}, nil); r.Status != http.StatusForbidden && r.Status != http.StatusBadRequest {
		t.Errorf("acknowledge without CSRF = %d, want refused", r.Status)
	}
	if auditCount(t, in.DB) != before {
		t.Error("a refused acknowledgement was recorded")
	}
	r := carol.post("/alerts/"+alertID+"/ack", carol.withCSRF(url.Values{"note": {"looking at the provider"}}), nil)
	if r.Status != http.StatusOK || !strings.Contains(text(r, "alert-acked"), "Carol On-call") || text(r, "alert-ack-note") != "looking at the provider" {
		t.Errorf("after acknowledging: %d, %q", r.Status, text(r, "alert-acked"))
	}
	if r.Doc.Find(`[data-testid="alert-ack-form"]`).Length() != 0 {
		t.Error("the acknowledged alert still offers the form")
	}
	if evs := adminEvents(t, in.DB, "alert.acknowledged"); len(evs) != 1 || evs[0].Details["note"] != "looking at the provider" {
		t.Errorf("alert.acknowledged events = %v", evs)
	}
	if again := carol.post("/alerts/"+alertID+"/ack", carol.withCSRF(url.Values{}), nil); !strings.Contains(again.Body, "Someone acknowledged it before you") || len(adminEvents(t, in.DB, "alert.acknowledged")) != 1 {
		t.Errorf("a second acknowledgement changed something or did not say so")
	}

	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	eh := erin.get("/")
	if eh.Doc.Find(`[data-testid="home-alert-failure_rate-refunds"] [data-testid="home-alert-acked"]`).Length() != 1 {
		t.Errorf("erin's home does not list the acknowledged alert: %q", eh.Doc.Find(`[data-testid="home-alerts"]`).Text())
	}
	if eh.Doc.Find(`[data-testid="home-admin"]`).Length() != 1 || eh.Doc.Find(`[data-testid="home-off"]`).Length() != 1 {
		t.Errorf("erin's home lacks the admin work or what is switched off")
	}
	if p := alice.get("/alerts/" + alertID); p.Status != http.StatusForbidden {
		t.Errorf("alice opens the alert = %d, want 403", p.Status)
	}
	if p := carol.get("/alerts/al_nope"); p.Status != http.StatusNotFound {
		t.Errorf("unknown alert = %d, want 404", p.Status)
	}
}
