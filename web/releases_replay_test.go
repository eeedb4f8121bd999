package web

import (
	"github.com/wardenhq/warden/changes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/releases"
)

// Carol replays the earlier demo release over recorded journeys: the
// replay is kept (one audit event), its page shows each journey's routes
// and the agreement, and the canary she starts next links it.
func TestReleaseReplayInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	candidate := demoHistory(t, in)[1].Digest // the earlier release: no customer_email skill
	for range 2 {
		journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	}

	if p := carol.get("/releases"); p.Doc.Find(`[data-testid="replay-form"]`).Length() != 1 {
		t.Fatal("no Replay candidate form on the Releases page")
	}
	events := auditCount(t, in.DB)
	form := url.Values{"candidate": {candidate}, "skill": {"order_status"}, "n": {"10"}}
	raw := carol.noRedirect().post("/releases/replays", carol.withCSRF(form), nil)
	loc := raw.Header.Get("Location")
	if raw.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/releases/replays/rpl_") {
		t.Fatalf("POST replay = %d to %q, want 303 to the kept replay", raw.Status, loc)
	}
	p := carol.get(loc)
	if p.Status != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200", loc, p.Status)
	}
	// The demo's seeded journeys count too: at least the two above.
	n := p.Doc.Find(`[data-testid="replay-table"] tbody tr`).Length()
	if got := text(p, "replay-rate"); n < 2 || !strings.HasPrefix(got, "Route agreement: 100.0 % (") {
		t.Errorf("replay rate = %q over %d rows; want 100 %% over at least 2", got, n)
	}
	if note := text(p, "replay-routing-note"); !strings.Contains(note, "threshold 0.45") || strings.Contains(note, "customer_email") {
		t.Errorf("routing note %q; want the candidate's threshold 0.45 and skill set without customer_email", note)
	}
	if got := auditCount(t, in.DB); got != events+1 {
		t.Errorf("a replay wrote %d audit events, want 1", got-events)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "release.replayed" || !strings.HasSuffix(loc, ev.Subject.ID) {
		t.Errorf("last audit event %s %s, want release.replayed of %s", ev.Verb, ev.Subject.ID, loc)
	}
	if p := carol.get("/releases"); p.Doc.Find(`[data-testid="replay-list"] a[href="`+loc+`"]`).Length() != 1 {
		t.Error("the Releases page does not list the kept replay")
	}

	// The canary started after the replay links it.
	p = carol.post("/releases/canary", carol.withCSRF(canaryForm(candidate, "10", "0.90", "replayed first")), nil)
	if href, _ := p.Doc.Find(`[data-testid="canary-replay"] a`).Attr("href"); href != loc {
		t.Errorf("canary card links replay %q, want %q (text %q)", href, loc, text(p, "canary-replay"))
	}

	events = auditCount(t, in.DB)
	form.Set("n", "201")
	if p := carol.post("/releases/replays", carol.withCSRF(form), nil); p.Status < 400 || p.Status >= 500 {
		t.Errorf("n=201 = %d, want a 4xx", p.Status)
	}
	if p := carol.get("/releases/replays/rpl_nope"); p.Status != http.StatusNotFound {
		t.Errorf("unknown replay = %d, want 404", p.Status)
	}
	if auditCount(t, in.DB) != events {
		t.Error("a refused replay wrote an audit event")
	}

	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	form.Set("n", "10")
	if p := alice.post("/releases/replays", alice.withCSRF(form), nil); p.Status != http.StatusForbidden {
		t.Errorf("alice POST replay = %d, want 403", p.Status)
	}
	if p := alice.get(loc); p.Status != http.StatusForbidden {
		t.Errorf("alice GET replay = %d, want 403", p.Status)
	}
}

// Erin (admin) publishes a bundle typed into the Releases page and
// activates it after a confirmation that shows the diff with the changed
// content; journeys then route under it. A bad bundle comes back as typed
// with the reason, and stores nothing. On-call may not publish.
func TestReleasePublishAndActivateInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	active := demoHistory(t, in)[0].Digest
	cur, err := releases.Get(t.Context(), in.DB.Read(), active)
	if err != nil {
		t.Fatal(err)
	}
	if p := erin.get("/releases"); p.Doc.Find(`[data-testid="publish-form"]`).Length() != 1 {
		t.Fatal("no Publish form for an admin")
	}

	events := auditCount(t, in.DB)
	bad := `{"model":"m","contents":{"routing":{"router":"keyword","threshold":7}}}`
	p := erin.post("/releases/publish", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "bundle": {bad}}), nil)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-bundle"), "threshold") {
		t.Errorf("bad bundle = %d, error %q; want 422 naming the threshold", p.Status, text(p, "error-bundle"))
	}
	if got := p.Doc.Find(`[data-testid="publish-bundle"]`).Text(); got != bad {
		t.Errorf("the bad bundle was not kept as typed: %q", got)
	}
	if auditCount(t, in.DB) != events {
		t.Error("a refused bundle wrote an audit event")
	}

	// The active release with a stricter routing policy, as content.
	body := `{"model":"` + cur.Bundle.Model + `","prompt":"` + cur.Bundle.Prompt + `","tools":"` + cur.Bundle.Tools +
		`","approval":"` + cur.Bundle.Approval + `","skills":"` + cur.Bundle.Skills +
		`","contents":{"routing":{"router":"keyword","threshold":0.9}}}`
	raw := erin.noRedirect().post("/releases/publish", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"bundle": {body}, "note": {"route only sure matches"}}), nil)
	loc := raw.Header.Get("Location")
	if raw.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/releases/activate?") {
		t.Fatalf("publish = %d to %q, want 303 to the activation confirmation", raw.Status, loc)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "release.published" {
		t.Errorf("last audit event %s, want release.published", ev.Verb)
	}
	confirm := erin.get(loc)
	if confirm.Status != http.StatusOK || text(confirm, "diff-changed") != "Changed: routing." || text(confirm, "published-notice") == "" {
		t.Fatalf("confirm = %d, diff %q", confirm.Status, text(confirm, "diff-changed"))
	}
	if got := text(confirm, "diff-content-routing"); !strings.Contains(got, "0.4") || !strings.Contains(got, "0.9") {
		t.Errorf("the diff does not show the routing content before and after: %q", got)
	}
	if text(confirm, "switch-from") != active {
		t.Errorf("confirmation from %q, want %s", text(confirm, "switch-from"), active)
	}
	target := text(confirm, "rollback-target")
	if n := len(demoHistory(t, in)); n != 2 {
		t.Fatalf("publishing or confirming moved the pointer: %d history rows", n)
	}
	form := url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "from": {active}, "digest": {target}, "reason": {"fewer misroutes"}}
	if text(confirm, "needs-second-admin") == "" || !strings.Contains(text(confirm, "needs-second-admin"), "routing") {
		t.Errorf("the confirmation does not say a second admin is needed for a routing change: %q", text(confirm, "needs-second-admin"))
	}
	// A release whose diff touches routing waits for a second admin: the
	// pending change shows the release diff, erin may not approve her own
	// request, frank's approval activates it.
	p = erin.post("/releases/activate", erin.withCSRF(form), nil)
	if got := demoHistory(t, in)[0].Digest; got != active {
		t.Fatalf("asking to activate moved the pointer to %s at once", got)
	}
	if got := text(p, "change-release-diff"); !strings.Contains(got, "0.4") || !strings.Contains(got, "0.9") || !strings.Contains(got, "Changed: routing.") {
		t.Errorf("the pending change does not show the release diff: %q", got)
	}
	digest, _ := p.Doc.Find(`input[name="digest"]`).Attr("value")
	if digest != "" {
		t.Error("the requester is offered the decision form")
	}
	pending := p.URL.Path
	ch, err := changes.Get(t.Context(), in.DB.Read(), strings.TrimPrefix(pending, "/changes/"))
	if err != nil || ch.Kind != changes.ReleaseActivate {
		t.Fatalf("pending change %s: %v %q", pending, err, ch.Kind)
	}
	if own := erin.post(pending+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {ch.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own release activation = %d, want 403", own.Status)
	}
	if got := demoHistory(t, in)[0].Digest; got != active {
		t.Fatalf("the requester's approval moved the pointer to %s", got)
	}
	approveAsFrank(t, in, p)
	p = erin.get("/releases")
	if text(p, "active-digest") != target {
		t.Errorf("after frank's approval active %q; want %s", text(p, "active-digest"), target)
	}
	if h := demoHistory(t, in)[0]; h.Reason != "fewer misroutes" || h.Kind != releases.KindActivated {
		t.Errorf("the history row = %s %q, want activated with erin's reason", h.Kind, h.Reason)
	}
	// The e-mail request scores about 0.85: under threshold 0.9 it has no route.
	if r := journey(t, in, in.DemoKey, "Email the customer of ORD-1001 about the delay", nil); r.Status != http.StatusUnprocessableEntity || r.code() != "no_route" {
		t.Errorf("e-mail journey under the new release: %d %q, want 422 no_route", r.Status, r.code())
	}
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.str("release") != target {
		t.Errorf("journey ran under %q, want the activated %s", r.str("release"), target)
	}

	// Rolling back to the earlier release applies at once; rolling forward
	// to the routing change again waits for a second admin.
	if p := erin.post("/releases/rollback", erin.withCSRF(rollbackForm(active, "too strict")), nil); text(p, "active-digest") != active {
		t.Errorf("rollback to the earlier release: active %q, want %s at once", text(p, "active-digest"), active)
	}
	fwd := erin.post("/releases/rollback", erin.withCSRF(rollbackForm(target, "try again")), nil)
	if !strings.HasPrefix(fwd.URL.Path, "/changes/chg_") || demoHistory(t, in)[0].Digest != active {
		t.Errorf("rolling forward landed on %s with active %s; want a pending change and %s still active", fwd.URL.Path, demoHistory(t, in)[0].Digest, active)
	}

	// A canary on 100 % of journeys would be an activation without a
	// second admin: refused with the reason.
	rows := len(demoHistory(t, in))
	c100 := erin.post("/releases/canary", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"candidate": {target}, "share": {"100"}, "floor": {"0.90"}, "reason": {"all at once"}}), nil)
	if c100.Status != http.StatusUnprocessableEntity || len(demoHistory(t, in)) != rows {
		t.Errorf("a 100 %% canary of a routing change = %d with %d history rows, want 422 and nothing added", c100.Status, len(demoHistory(t, in)))
	}

	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if p := carol.get("/releases"); p.Doc.Find(`[data-testid="publish-form"]`).Length() != 0 {
		t.Error("on-call sees the Publish form")
	}
	if p := carol.post("/releases/publish", carol.withCSRF(url.Values{"bundle": {body}}), nil); p.Status != http.StatusForbidden {
		t.Errorf("carol POST publish = %d, want 403", p.Status)
	}
	if p := carol.post("/releases/activate", carol.withCSRF(form), nil); p.Status != http.StatusForbidden {
		t.Errorf("carol POST activate = %d, want 403", p.Status)
	}
}

// A confirmation pins the release it showed as active: if someone else
// moved the pointer meanwhile, confirming is a 409 and changes nothing.
func TestRollbackConfirmationIsPinned(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	hist := demoHistory(t, in)
	active, earlier := hist[0].Digest, hist[1].Digest
	confirm := carol.get("/releases/rollback?" + url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "digest": {earlier}}.Encode())
	from, _ := confirm.Doc.Find(`input[name="from"]`).Attr("value")
	if from != active {
		t.Fatalf("the confirmation pins %q, want the active %s", from, active)
	}
	// Meanwhile Erin rolls back to the earlier release first.
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	if p := erin.post("/releases/rollback", erin.withCSRF(rollbackForm(earlier, "someone else first")), nil); text(p, "active-digest") != earlier {
		t.Fatalf("Erin's rollback did not happen: %q", text(p, "active-digest"))
	}
	// Carol's page, opened before, now asks to roll forward to `active`
	// from `active`: what she confirmed is not what is active any more.
	rows := len(demoHistory(t, in))
	events := auditCount(t, in.DB)
	form := rollbackForm(active, "stale page")
	form.Set("from", from)
	if p := carol.post("/releases/rollback", carol.withCSRF(form), nil); p.Status != http.StatusConflict {
		t.Errorf("stale confirmation = %d, want 409", p.Status)
	}
	if len(demoHistory(t, in)) != rows || auditCount(t, in.DB) != events {
		t.Error("a stale confirmation changed the history or the audit trail")
	}
}
