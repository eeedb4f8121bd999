package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
)

// demoHistory is the demo agent's pointer history, newest first.
func demoHistory(t *testing.T, in *instance) []releases.Pointer {
	t.Helper()
	h, err := releases.History(context.Background(), in.DB.Read(), releases.DefaultAgent, releases.DefaultEnv, store.Page{Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	return h.Rows
}

func rollbackForm(digest, reason string) url.Values {
	return url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "digest": {digest}, "reason": {reason}}
}

func TestReleaseRollbackInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	hist := demoHistory(t, in)
	if len(hist) != 2 {
		t.Fatalf("demo history has %d rows, want 2", len(hist))
	}
	active, earlier := hist[0].Digest, hist[1].Digest

	p := carol.get("/releases")
	if p.Status != http.StatusOK || text(p, "active-digest") != active {
		t.Fatalf("GET /releases = %d, active %q; want 200 and %s", p.Status, text(p, "active-digest"), active)
	}
	href, ok := p.Doc.Find(`[data-testid="rollback-` + earlier[7:19] + `"]`).Attr("href")
	if !ok {
		t.Fatalf("no Roll back on the earlier release %s", earlier)
	}
	if p.Doc.Find(`[data-testid="rollback-`+active[7:19]+`"]`).Length() != 0 {
		t.Error("the active release offers Roll back to itself")
	}
	d := carol.get("/releases?" + url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "a": {earlier}, "b": {active}}.Encode())
	if got := text(d, "diff-changed"); got != "Changed: prompt, routing and skills." {
		t.Errorf("diff = %q, want prompt, routing and skills", got)
	}

	confirm := carol.get(href)
	if confirm.Status != http.StatusOK || text(confirm, "diff-changed") != "Changed: prompt, routing and skills." || text(confirm, "rollback-target") != earlier {
		t.Fatalf("confirm = %d, diff %q, target %q", confirm.Status, text(confirm, "diff-changed"), text(confirm, "rollback-target"))
	}
	if n := len(demoHistory(t, in)); n != 2 {
		t.Fatalf("opening the confirmation added history rows: %d", n)
	}

	// No reason: 422 with the field error, nothing changed.
	events := auditCount(t, in.DB)
	p = carol.post("/releases/rollback", carol.withCSRF(rollbackForm(earlier, "  ")), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-reason") == "" {
		t.Errorf("rollback without reason = %d, field error %q; want 422 with one", p.Status, text(p, "error-reason"))
	}
	if n := len(demoHistory(t, in)); n != 2 || auditCount(t, in.DB) != events {
		t.Errorf("a refused rollback changed something: %d history rows, %d audit events (was %d)", n, auditCount(t, in.DB), events)
	}

	// Rolling back adds a row and redirects with a notice; twice is once.
	raw := carol.noRedirect().post("/releases/rollback", carol.withCSRF(rollbackForm(earlier, "refunds misrouted")), nil)
	if raw.Status != http.StatusSeeOther {
		t.Fatalf("rollback = %d, want 303", raw.Status)
	}
	p = carol.get(raw.Header.Get("Location"))
	if text(p, "active-digest") != earlier || !strings.Contains(text(p, "notice"), "Rolled back") {
		t.Errorf("after rollback active %q notice %q; want %s and a notice", text(p, "active-digest"), text(p, "notice"), earlier)
	}
	p = carol.post("/releases/rollback", carol.withCSRF(rollbackForm(earlier, "pressed twice")), nil)
	if !strings.Contains(text(p, "notice"), "already active") {
		t.Errorf("second rollback notice %q", text(p, "notice"))
	}
	hist = demoHistory(t, in)
	var kinds []string
	for _, h := range hist {
		kinds = append(kinds, h.Kind+" "+h.Digest)
	}
	want := []string{releases.KindRolledBack + " " + earlier, releases.KindActivated + " " + active, releases.KindActivated + " " + earlier}
	if !slices.Equal(kinds, want) || hist[0].Author == "" || hist[0].Reason != "refunds misrouted" {
		t.Errorf("history = %q (newest by %q because %q), want %q", kinds, hist[0].Author, hist[0].Reason, want)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "release.rolled_back" || ev.Subject.ID != earlier {
		t.Errorf("last audit event %s %s, want release.rolled_back %s", ev.Verb, ev.Subject.ID, earlier)
	}

	// The API reports the digest new journeys run under.
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.str("release") != earlier {
		t.Errorf("API release = %q, want the rolled-back-to %s", r.str("release"), earlier)
	}
}

func TestReleaseRollbackNeedsTheRole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	hist := demoHistory(t, in)
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice") // approver only
	if p := alice.get("/releases"); p.Status != http.StatusForbidden {
		t.Errorf("alice GET /releases = %d, want 403", p.Status)
	}
	if p := alice.get("/"); p.Doc.Find(`nav a[href="/releases"]`).Length() != 0 {
		t.Error("alice's navigation offers Releases")
	}
	if p := alice.post("/releases/rollback", alice.withCSRF(rollbackForm(hist[1].Digest, "not mine to do")), nil); p.Status != http.StatusForbidden {
		t.Errorf("alice POST /releases/rollback = %d, want 403", p.Status)
	}
	if n := len(demoHistory(t, in)); n != 2 {
		t.Errorf("a forbidden rollback changed the history: %d rows", n)
	}
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	if p := erin.get("/releases"); p.Status != http.StatusOK || p.Doc.Find(`nav a[href="/releases"]`).Length() != 1 {
		t.Errorf("erin (admin) GET /releases = %d, want 200 with Releases in the navigation", p.Status)
	}
}

func canaryForm(candidate, share, floor, reason string) url.Values {
	return url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "candidate": {candidate},
		"share": {share}, "floor": {floor}, "reason": {reason}}
}

func TestReleaseCanaryInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	hist := demoHistory(t, in)
	active, candidate := hist[0].Digest, hist[1].Digest

	p := carol.get("/releases")
	if p.Doc.Find(`[data-testid="canary-form"]`).Length() != 1 {
		t.Fatal("no Start canary form on the Releases page")
	}
	events := auditCount(t, in.DB)
	p = carol.post("/releases/canary", carol.withCSRF(canaryForm(candidate, "101", "0.90", "")), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-share") == "" {
		t.Errorf("share 101 = %d, field error %q; want 422 with one", p.Status, text(p, "error-share"))
	}
	if auditCount(t, in.DB) != events {
		t.Error("a refused canary wrote an audit event")
	}

	raw := carol.noRedirect().post("/releases/canary", carol.withCSRF(canaryForm(candidate, "100", "0.90", "shorter prompt")), nil)
	if raw.Status != http.StatusSeeOther {
		t.Fatalf("start canary = %d, want 303", raw.Status)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "release.canary_started" || ev.Subject.ID != candidate {
		t.Errorf("last audit event %s %s, want release.canary_started %s", ev.Verb, ev.Subject.ID, candidate)
	}
	// At share 100 every new journey runs under the candidate.
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.str("release") != candidate {
		t.Errorf("API release during a 100%% canary = %q, want %s", r.str("release"), candidate)
	}
	p = carol.get(raw.Header.Get("Location"))
	if text(p, "canary-candidate") != candidate[7:19] || text(p, "canary-trials") != "1" || text(p, "canary-successes") != "1" ||
		text(p, "canary-decision") != "hold" || text(p, "canary-lower") == "" || text(p, "canary-reasons") == "" {
		t.Errorf("canary card: candidate %q, %s/%s, lower %q, decision %q, reasons %q",
			text(p, "canary-candidate"), text(p, "canary-successes"), text(p, "canary-trials"), text(p, "canary-lower"),
			text(p, "canary-decision"), text(p, "canary-reasons"))
	}
	if _, ok := p.Doc.Find(`[data-testid="canary-promote"]`).Attr("disabled"); !ok {
		t.Error("Promote is enabled while the gate holds")
	}
	if p := carol.post("/releases/canary/promote", carol.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"candidate": {candidate}}), nil); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("promote on hold = %d, want 422", p.Status)
	}

	// Alice (approver) may neither start nor roll back a canary.
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	stop := url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "candidate": {candidate}, "reason": {"not mine"}}
	for _, path := range []string{"/releases/canary", "/releases/canary/rollback", "/releases/canary/promote"} {
		if p := alice.post(path, alice.withCSRF(stop), nil); p.Status != http.StatusForbidden {
			t.Errorf("alice POST %s = %d, want 403", path, p.Status)
		}
	}

	p = carol.post("/releases/canary/rollback", carol.withCSRF(stop), nil)
	if !strings.Contains(text(p, "notice"), "Canary rolled back") || p.Doc.Find(`[data-testid="canary-form"]`).Length() != 1 {
		t.Errorf("after rolling back: notice %q, start form shown %v", text(p, "notice"), p.Doc.Find(`[data-testid="canary-form"]`).Length() == 1)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "release.canary_rolled_back" || ev.Subject.ID != candidate {
		t.Errorf("last audit event %s %s, want release.canary_rolled_back %s", ev.Verb, ev.Subject.ID, candidate)
	}
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.str("release") != active {
		t.Errorf("API release after the canary = %q, want %s", r.str("release"), active)
	}
}
