package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/releases"
)

// Promoting a canary puts its candidate on every journey: an activation,
// and governed as one (docs/changes.md, release.activate). Erin (admin)
// publishes a release with another prompt, runs it as a canary until the
// gate says promote, and presses Promote: the Releases page told her a
// second admin is needed, the active release stays, the canary keeps
// running and a pending change shows the move. Erin may not approve her
// own; frank (the dev IdP's second admin) approves and the candidate is
// the active release, recorded as promoted with erin's reason.
func TestPromotingAGovernedCanaryWaitsForASecondAdmin(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	active := demoHistory(t, in)[0].Digest
	cur, err := releases.Get(t.Context(), in.DB.Read(), active)
	if err != nil {
		t.Fatal(err)
	}
	// The active release with another system prompt, as content.
	body := `{"model":"` + cur.Bundle.Model + `","routing":"` + cur.Bundle.Routing + `","tools":"` + cur.Bundle.Tools +
		`","approval":"` + cur.Bundle.Approval + `","skills":"` + cur.Bundle.Skills +
		`","contents":{"prompt":"You are the shop's support agent. Answer in one short sentence."}}`
	raw := erin.noRedirect().post("/releases/publish", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"bundle": {body}, "note": {"shorter answers"}}), nil)
	if raw.Status != http.StatusSeeOther {
		t.Fatalf("publish = %d", raw.Status)
	}
	candidate := erin.get(raw.Header.Get("Location")).Doc.Find(`[data-testid="rollback-target"]`).Text()
	if pub, err := releases.Get(t.Context(), in.DB.Read(), candidate); err != nil || !slices.Equal(releases.Diff(cur.Bundle, pub.Bundle), []string{"prompt"}) {
		t.Fatalf("published candidate %q (%v) does not differ from the active release in its prompt alone", candidate, err)
	}

	// A canary on half the journeys with a low floor: one success is
	// enough for the gate.
	if p := erin.post("/releases/canary", erin.withCSRF(canaryForm(candidate, "50", "0.10", "shorter answers")), nil); text(p, "canary-candidate") == "" {
		t.Fatalf("the canary did not start: %d %q", p.Status, text(p, "error-summary"))
	}
	ran := false
	for i := 0; i < 40 && !ran; i++ {
		r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
		ran = r.Status == http.StatusOK && r.str("release") == candidate
	}
	if !ran {
		t.Fatal("no journey of 40 ran under the 50 % canary")
	}
	p := erin.get("/releases")
	if text(p, "canary-decision") != "promote" {
		t.Fatalf("canary decision %q (%q), want promote", text(p, "canary-decision"), text(p, "canary-reasons"))
	}
	if got := text(p, "canary-needs-second-admin"); !strings.Contains(got, "Needs a second admin") || !strings.Contains(got, "prompt") {
		t.Errorf("the Promote button does not say it needs a second admin for a prompt change: %q", got)
	}
	form := url.Values{}
	p.Doc.Find(`[data-testid="canary-promote-form"] input`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		value, _ := s.Attr("value")
		form.Set(name, value)
	})
	if form.Get("candidate") != candidate || form.Get("_csrf") == "" || form.Get("reason") == "" {
		t.Fatalf("promote form sends %v", form)
	}

	landed := erin.post("/releases/canary/promote", form, nil)
	if !strings.HasPrefix(landed.URL.Path, "/changes/chg_") {
		t.Fatalf("promote landed on %s (%d), want the pending change", landed.URL.Path, landed.Status)
	}
	if text(landed, "change-status") != "waiting for a second admin" {
		t.Errorf("change status %q, want waiting for a second admin", text(landed, "change-status"))
	}
	ptr, err := releases.Active(t.Context(), in.DB.Read(), releases.DefaultAgent, releases.DefaultEnv)
	if err != nil || ptr.Digest != active || ptr.Candidate != candidate {
		t.Fatalf("after asking to promote: active %s with canary %q (%v); want %s still active with the canary running", ptr.Digest, ptr.Candidate, err, active)
	}
	ch, err := changes.Get(t.Context(), in.DB.Read(), strings.TrimPrefix(landed.URL.Path, "/changes/"))
	if err != nil || ch.Kind != changes.ReleaseActivate || ch.Status != changes.Pending ||
		!strings.HasPrefix(ch.Summary, "Promote the canary release "+candidate[7:19]) || !strings.Contains(ch.Summary, "(changes prompt)") {
		t.Fatalf("pending change %+v (%v), want a pending release.activate promoting %s", ch, err, candidate)
	}
	if own := erin.post(landed.URL.Path+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {ch.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own promotion = %d, want 403", own.Status)
	}
	if ptr, _ := releases.Active(t.Context(), in.DB.Read(), releases.DefaultAgent, releases.DefaultEnv); ptr.Digest != active {
		t.Fatalf("erin's own approval moved the active release to %s", ptr.Digest)
	}

	approveAsFrank(t, in, landed)
	ptr, err = releases.Active(t.Context(), in.DB.Read(), releases.DefaultAgent, releases.DefaultEnv)
	if err != nil || ptr.Digest != candidate || ptr.Candidate != "" || ptr.Kind != releases.KindPromoted || ptr.Reason != form.Get("reason") {
		t.Errorf("after frank's approval the pointer is %+v (%v); want %s promoted with erin's reason", ptr, err, candidate)
	}
	if p := erin.get("/releases"); text(p, "active-digest") != candidate {
		t.Errorf("the Releases page shows %q active, want %s", text(p, "active-digest"), candidate)
	}
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.str("release") != candidate {
		t.Errorf("a journey after the promotion ran under %q, want %s", r.str("release"), candidate)
	}
}
