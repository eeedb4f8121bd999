package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
)

// Carol (on-call) labels a journey's route in the console: the trace page
// offers the form, a wrong route names where it belonged, the label shows
// on the trace, counts on the Releases page's route accuracy, leaves the
// Labelling queue, and is exported redacted. Refused: a POST without a
// CSRF token, an approver or auditor labelling, a bad label (422, nothing
// written), an admin-only settings form posted by on-call.
func TestRouteLabelsInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	const email = "jane.doe@example.com"
	res := journey(t, in, in.DemoKey, "Where is my order ORD-1003? Write to "+email, nil)
	id, _ := res.Body["id"].(string)
	if id == "" {
		t.Fatalf("journey: %d %s", res.Status, res.Raw)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	// The demo's own labels (app/demo.go): 3 of 6 right, one wrong route
	// of each kind.
	rel := carol.get("/releases")
	if got := text(rel, "route-accuracy-total"); !strings.HasPrefix(got, "50.0 % of 6 labelled journeys routed right (3).") {
		t.Errorf("demo route accuracy = %q, want 50.0 %% of 6", got)
	}
	if got := rowsText(rel, "route-accuracy-confusion"); got != "order_statusno skill (refused)1 | order_statusorder_support1 | order_statusrefunds1" {
		t.Errorf("demo wrong routes = %q", got)
	}
	// Someone scoped to another tenant counts that tenant's labels only
	// (none), not acme's.
	h := &handlers.Console{DB: in.DB, Runtime: in.Agent.Journeys}
	for _, sc := range []struct {
		tenant, want string
	}{{"globex", "route-accuracy-empty"}, {"acme", "route-accuracy-total"}} {
		p := &identity.Principal{ID: "p-" + sc.tenant + "-oncall", Name: "Scoped On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{sc.tenant}}
		rec, err := callAs(t, h.ReleaseList, p, http.MethodGet, "/releases", nil)
		if err != nil {
			t.Fatalf("releases as on-call of %s: %v", sc.tenant, err)
		}
		if body := rec.Body.String(); !strings.Contains(body, `data-testid="`+sc.want+`"`) {
			t.Errorf("on-call of %s sees no %s on Releases", sc.tenant, sc.want)
		}
	}
	demoRows := countRows(t, in.DB, `SELECT COUNT(*) FROM audit_events WHERE verb = 'route.labelled'`) + countRows(t, in.DB, `SELECT COUNT(*) FROM route_labels`)
	// Every journey of the day is proposed (the default is 5 % per skill).
	if p := erin.post("/labels/settings", erin.withCSRF(url.Values{"sample_percent": {"100"}, "alert_percent": {"80"}, "alert_last_n": {"50"}}), nil); p.Status != http.StatusOK {
		t.Fatalf("saving settings = %d", p.Status)
	}

	q := carol.get("/labels")
	if q.Status != http.StatusOK || q.Doc.Find(`[data-testid="label-item-`+id+`"]`).Length() != 1 {
		t.Fatalf("Labelling queue (%d) does not propose %s: %s", q.Status, id, text(q, "label-progress"))
	}
	if p := carol.get("/labels?day=2001-01-01"); text(p, "label-queue-empty") != "No journey ended on this day." {
		t.Errorf("an empty day says %q", text(p, "label-queue-empty"))
	}
	if p := carol.get("/labels?day=yesterday"); p.Status != http.StatusBadRequest {
		t.Errorf("bad day = %d, want 400", p.Status)
	}

	trace := carol.get("/traces/" + id)
	if trace.Doc.Find(`[data-testid="route-label-form"]`).Length() != 1 || text(trace, "route-label-none") == "" {
		t.Fatalf("trace page lacks the label form or the unlabelled note")
	}
	path := "/traces/" + id + "/label"
	// Without a CSRF token: refused, nothing written.
	if p := carol.post(path, url.Values{"verdict": {"right"}}, nil); p.Status != http.StatusForbidden {
		t.Errorf("label without CSRF = %d, want 403", p.Status)
	}
	// A bad label: 422 on the trace page, nothing written.
	p := carol.post(path, carol.withCSRF(url.Values{"verdict": {"wrong"}}), nil)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Doc.Find(`[data-testid="route-label-form"]`).Text(), "Choose the skill") {
		t.Errorf("wrong without a skill = %d, want 422 naming the field", p.Status)
	}
	for _, who := range []string{"alice", "dave"} {
		b := newBrowser(t, in.URL)
		b.loginDev(who)
		if p := b.post(path, b.withCSRF(url.Values{"verdict": {"right"}}), nil); p.Status != http.StatusForbidden {
			t.Errorf("%s labels = %d, want 403", who, p.Status)
		}
		if p := b.get("/traces/" + id); p.Status == http.StatusOK && p.Doc.Find(`[data-testid="route-label-form"]`).Length() != 0 {
			t.Errorf("%s is offered the label form", who)
		}
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM audit_events WHERE verb = 'route.labelled'`) + countRows(t, in.DB, `SELECT COUNT(*) FROM route_labels`); n != demoRows {
		t.Fatalf("refused labels wrote %d labels and events", n-demoRows)
	}

	raw := carol.noRedirect().post(path, carol.withCSRF(url.Values{"verdict": {"wrong"}, "expected": {"order_support"}}), nil)
	if raw.Status != http.StatusSeeOther {
		t.Fatalf("label = %d, want 303", raw.Status)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "route.labelled" || ev.Subject.ID != id || ev.Details["expected"] != "order_support" {
		t.Errorf("last audit event %s %s %v, want route.labelled of %s", ev.Verb, ev.Subject.ID, ev.Details, id)
	}
	trace = carol.get("/traces/" + id)
	if got := text(trace, "route-label-current"); !strings.Contains(got, "wrong") || !strings.Contains(got, "order_support") || !strings.Contains(got, "Carol") {
		t.Errorf("trace shows label %q", got)
	}
	if q := carol.get("/labels"); q.Doc.Find(`[data-testid="label-item-`+id+`"]`).Length() != 0 {
		t.Error("a labelled journey is still proposed")
	}
	rel = carol.get("/releases")
	if got := text(rel, "route-accuracy-total"); !strings.HasPrefix(got, "42.9 % of 7 labelled journeys") {
		t.Errorf("route accuracy = %q, want 42.9 %% (the demo's 3 of 6, and this one wrong)", got)
	}
	if row := text(rel, "route-accuracy-skill-order_support"); row != "order_support0002" { // routed, right, FP, FN
		t.Errorf("order_support line = %q, want two false negatives (the demo's and this one)", row)
	}
	if rel.Doc.Find(`[data-testid="route-accuracy-chart"] rect`).Length() != 1 {
		t.Error("no weekly bar in the accuracy chart")
	}
	// Relabelled right: accuracy follows.
	carol.post(path, carol.withCSRF(url.Values{"verdict": {"right"}}), nil)
	if got := text(carol.get("/releases"), "route-accuracy-total"); !strings.HasPrefix(got, "57.1 % of 7 labelled journeys") {
		t.Errorf("after relabelling: route accuracy = %q, want 57.1 %% (4 of 7)", got)
	}

	// Every link the label pages offer opens for who sees them.
	followLinks(t, carol, "carol", carol.get("/labels"))
	followLinks(t, carol, "carol", carol.get("/traces/"+id))
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	followLinks(t, dave, "dave", dave.get("/traces/"+id))

	exp := carol.get("/labels/export.jsonl")
	if exp.Status != http.StatusOK || strings.Contains(exp.Body, email) {
		t.Fatalf("export = %d, has the e-mail in the clear: %v", exp.Status, strings.Contains(exp.Body, email))
	}
	sc := bufio.NewScanner(strings.NewReader(exp.Body))
	rows := 0
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		if row["journey"] == id && (row["verdict"] != "right" || row["release"] == "" || !strings.Contains(row["input"].(string), "[email:")) {
			t.Errorf("export row %v", row)
		}
		rows++
	}
	if rows != 7 {
		t.Errorf("export has %d rows, want 7 (the demo's 6 and this one)", rows)
	}

	// Settings: admins only, validated, audited.
	settings := url.Values{"sample_percent": {"20"}, "alert_percent": {"90"}, "alert_last_n": {"30"}}
	if p := carol.post("/labels/settings", carol.withCSRF(settings), nil); p.Status != http.StatusForbidden {
		t.Errorf("on-call saves settings = %d, want 403", p.Status)
	}
	bad := url.Values{"sample_percent": {"0"}, "alert_percent": {"90"}, "alert_last_n": {"30"}}
	if p := erin.post("/labels/settings", erin.withCSRF(bad), nil); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("sample 0 = %d, want 422", p.Status)
	}
	if p := erin.post("/labels/settings", erin.withCSRF(settings), nil); !strings.Contains(text(p, "label-settings-now"), "Sample 20 %") {
		t.Errorf("after saving: %q", text(p, "label-settings-now"))
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "route.label_settings_set" {
		t.Errorf("last audit event %s, want route.label_settings_set", ev.Verb)
	}
}

// A canary that requires labels holds a candidate that routes the
// labelled journeys worse than the active release: the demo's earlier
// release has no customer_email skill, and people said an e-mail request
// belonged there. The demo's six labels (3 right) route the same under
// both releases.
func TestCanaryLabelGateInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	candidate := demoHistory(t, in)[1].Digest // the earlier release: no customer_email skill
	res := journey(t, in, in.DemoKey, "Email the customer of ORD-1001 that the parcel is delayed", nil)
	id, _ := res.Body["id"].(string)
	// The demo key may not use the skill, but the journey was routed to it
	// and recorded: people can still say that was the right route.
	if id == "" || !strings.Contains(string(res.Raw), `"skill":"customer_email"`) {
		t.Fatalf("journey: %d %s", res.Status, res.Raw)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	carol.post("/traces/"+id+"/label", carol.withCSRF(url.Values{"verdict": {"right"}}), nil)

	form := canaryForm(candidate, "10", "0.50", "labels first")
	form.Set("require_labels", "1")
	p := carol.post("/releases/canary", carol.withCSRF(form), nil)
	if got := text(p, "canary-labels"); !strings.Contains(got, "no replay against labels yet") || text(p, "canary-decision") != "hold" {
		t.Fatalf("canary with a label gate and no replay: labels %q, decision %q", got, text(p, "canary-decision"))
	}
	raw := carol.noRedirect().post("/releases/replays", carol.withCSRF(url.Values{"candidate": {candidate}, "skill": {"order_status"}, "n": {"10"}}), nil)
	rp := carol.get(raw.Header.Get("Location"))
	if got := text(rp, "replay-label-accuracy"); !strings.Contains(got, "42.9 % (3 of 7)") {
		t.Errorf("replay accuracy on labels = %q, want 3 of 7", got)
	}
	p = carol.get("/releases")
	if got := text(p, "canary-labels"); !strings.Contains(got, "candidate 42.9 % (3 of 7), active 57.1 % (4 of 7)") {
		t.Errorf("canary labels = %q", got)
	}
	if !strings.Contains(text(p, "canary-reasons"), "worse than the active release's 4") {
		t.Errorf("canary reasons = %q", text(p, "canary-reasons"))
	}
	pr := carol.post("/releases/canary/promote", carol.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"candidate": {candidate}, "reason": {"ship"}}), nil)
	if pr.Status != http.StatusUnprocessableEntity {
		t.Errorf("promote a worse candidate = %d, want 422", pr.Status)
	}
}

// A route accuracy alert's page proposes the runbook that rolls the
// release back, with its button.
func TestRouteAccuracyAlertLinksTheRollbackRunbook(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	if _, err := in.DB.Read().Exec(`INSERT INTO alerts (id, kind, subject, value, threshold, fired_at) VALUES ('alr_ra', 'route_accuracy', 'support-agent/production', 60, 80, ?)`,
		store.Now()); err != nil {
		t.Fatal(err)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	p := carol.get("/alerts/alr_ra")
	if href, _ := p.Doc.Find(`[data-testid="alert-runbook-card"] [data-testid="alert-runbook"]`).Attr("href"); href != "/runbooks/bad-release-rollback?alert=alr_ra" {
		t.Errorf("route accuracy alert's runbook = %q, want /runbooks/bad-release-rollback (status %d)", href, p.Status)
	}
	if got := text(p, "alert-proposed-rollback"); got != "Roll back to the previous release" {
		t.Errorf("proposed button = %q", got)
	}
}

// rowsText is the text of the body rows of the table testid, each row's
// cells run together, rows joined by " | ".
func rowsText(p page, testid string) string {
	return strings.Join(p.Doc.Find(`[data-testid="`+testid+`"] tbody tr`).Map(func(_ int, s *goquery.Selection) string {
		return strings.TrimSpace(s.Text())
	}), " | ")
}

// TestRouteAccuracyAlertChangesWaitForASecondAdmin: lowering the accuracy
// the route accuracy alert fires below (or counting more labels) quietens
// it, so it waits for a second admin: erin asks, erin may not approve it,
// frank does and it applies. Raising it applies at once; the sample alone
// applies at once, and with a quieter alert the whole save waits. A bad
// value is a 422 that records nothing.
func TestRouteAccuracyAlertChangesWaitForASecondAdmin(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	settings := func() routelabels.Settings {
		t.Helper()
		s, err := routelabels.GetSettings(ctx, in.DB.Read())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if p := erin.get("/labels"); p.Doc.Find(`[data-testid="label-settings-form"] [data-testid="needs-second-admin"]`).Length() != 1 {
		t.Error("the labelling settings form does not say a quieter alert needs a second admin")
	}

	audits, recorded := auditCount(t, in.DB), changeCount(t, in.DB)
	for _, bad := range []url.Values{
		{"sample_percent": {"5"}, "alert_percent": {"0"}, "alert_last_n": {"50"}},
		{"sample_percent": {"5"}, "alert_percent": {"60"}, "alert_last_n": {"10001"}},
		{"sample_percent": {"0"}, "alert_percent": {"60"}, "alert_last_n": {"50"}},
	} {
		if p := erin.post("/labels/settings", erin.withCSRF(bad), nil); p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%v = %d at %s, want 422 on the form", bad, p.Status, p.URL.Path)
		}
	}
	if a, c := auditCount(t, in.DB)-audits, changeCount(t, in.DB)-recorded; a != 0 || c != 0 || settings().Custom {
		t.Fatalf("refused settings saved something: %d audit events, %d changes, %+v", a, c, settings())
	}

	// Lowering the alert (80 % by default) waits.
	landed := erin.post("/labels/settings", erin.withCSRF(url.Values{"sample_percent": {"5"}, "alert_percent": {"60"}, "alert_last_n": {"50"}, "change_reason": {"too noisy"}}), nil)
	if s := settings(); s.AlertPercent != 80 {
		t.Fatalf("lowering the alert applied before a second admin approved: %+v", s)
	}
	chID := strings.TrimPrefix(landed.URL.Path, "/changes/")
	c, err := changes.Get(ctx, in.DB.Read(), chID)
	if err != nil || c.Kind != changes.RouteAccuracy {
		t.Fatalf("lowering landed on %s: %+v %v", landed.URL.Path, c, err)
	}
	if row := landed.Doc.Find(`[data-testid="diff-accuracy alert below percent"]`); row.Find(`[data-testid="diff-before"]`).Text() != "80" ||
		row.Find(`[data-testid="diff-after"]`).Text() != "60" || !strings.Contains(row.Text(), "route accuracy alert below (%)") {
		t.Errorf("the diff's accuracy row reads %q", row.Text())
	}
	if own := erin.post("/changes/"+chID+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own change = %d, want 403", own.Status)
	}
	if p := erin.get("/labels"); p.Doc.Find(`[data-testid="pending-changes"] a[href="/changes/`+chID+`"]`).Length() != 1 {
		t.Error("the Labelling page does not show the pending change")
	}
	approveAsFrank(t, in, landed)
	if s := settings(); s.AlertPercent != 60 || s.AlertLastN != 50 || s.SamplePercent != 5 {
		t.Fatalf("after frank approved, settings = %+v, want 5/60/50", s)
	}
	if p := erin.get("/labels"); !strings.Contains(text(p, "label-settings-now"), "fires below 60 % over the last 50") {
		t.Errorf("after approval the page says %q", text(p, "label-settings-now"))
	}

	// Raising it, counting fewer labels, applies at once.
	p := erin.post("/labels/settings", erin.withCSRF(url.Values{"sample_percent": {"5"}, "alert_percent": {"90"}, "alert_last_n": {"30"}}), nil)
	if s := settings(); p.URL.Path != "/labels" || s.AlertPercent != 90 || s.AlertLastN != 30 {
		t.Fatalf("raising the alert landed on %s, settings %+v; want applied at once", p.URL.Path, s)
	}

	// The sample with a quieter alert: the whole save waits.
	recorded = changeCount(t, in.DB)
	p = erin.post("/labels/settings", erin.withCSRF(url.Values{"sample_percent": {"50"}, "alert_percent": {"90"}, "alert_last_n": {"100"}}), nil)
	if s := settings(); !strings.HasPrefix(p.URL.Path, "/changes/chg_") || s.SamplePercent != 5 || s.AlertLastN != 30 {
		t.Errorf("sample and more labels landed on %s, settings %+v; want a pending change and nothing applied", p.URL.Path, s)
	}
	// The sample alone is no control: at once.
	p = erin.post("/labels/settings", erin.withCSRF(url.Values{"sample_percent": {"50"}, "alert_percent": {"90"}, "alert_last_n": {"30"}}), nil)
	if s := settings(); p.URL.Path != "/labels" || s.SamplePercent != 50 {
		t.Errorf("the sample alone landed on %s, settings %+v; want applied at once", p.URL.Path, s)
	}
	if n := changeCount(t, in.DB) - recorded; n != 1 {
		t.Errorf("%d changes recorded, want only the one that counts more labels", n)
	}
}
