package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/releases"
)

// A release that changes the high-risk refunds skill (owner
// group:payments in its SKILL.md) needs, besides a second admin, an
// approval from a member of payments: erin (admin, not in payments) is
// refused with a message naming the owner; frank (admin, in payments, in
// the development identity provider) approves and it applies.
func TestReleaseTouchingAHighRiskSkillNeedsItsOwner(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	frank := newBrowser(t, in.URL)
	frank.loginDev("frank")
	ctx := t.Context()
	active := demoHistory(t, in)[0].Digest
	cur, err := releases.Get(ctx, in.DB.Read(), active)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := releases.Content(ctx, in.DB.Read(), cur.Bundle.Skills)
	if err != nil {
		t.Fatal(err)
	}
	set, err := releases.SkillSet(raw)
	if err != nil {
		t.Fatal(err)
	}
	// The refunds SKILL.md with one more instruction line, kept as Warden
	// keeps every file it loads.
	var file releases.SkillFile
	for i, e := range set {
		if e.Name != "refunds" {
			continue
		}
		body, err := releases.SkillFileBody(ctx, in.DB.Read(), e.Hash)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, "high_risk: true") || !strings.Contains(body, "owner: group:payments") {
			t.Fatalf("the built-in refunds skill is not marked high-risk with owner group:payments:\n%s", body)
		}
		body += "\nAlways read the refund amount back to the customer.\n"
		sum := sha256.Sum256([]byte(body))
		file = releases.SkillFile{Name: "refunds", Hash: hex.EncodeToString(sum[:]), Body: body}
		set[i].Hash = file.Hash
	}
	if file.Hash == "" {
		t.Fatal("the active release has no refunds skill file")
	}
	if err := releases.KeepSkillFiles(ctx, in.DB, []releases.SkillFile{file}); err != nil {
		t.Fatal(err)
	}
	skillsJSON, _ := json.Marshal(set)
	body := `{"model":"` + cur.Bundle.Model + `","prompt":"` + cur.Bundle.Prompt + `","tools":"` + cur.Bundle.Tools +
		`","approval":"` + cur.Bundle.Approval + `","routing":"` + cur.Bundle.Routing + `","contents":{"skills":` + string(skillsJSON) + `}}`
	pub := erin.noRedirect().post("/releases/publish", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"bundle": {body}, "note": {"read amounts back"}}), nil)
	loc := pub.Header.Get("Location")
	if pub.Status != http.StatusSeeOther {
		t.Fatalf("publish = %d %q", pub.Status, text(pub, "error-bundle"))
	}
	target, _ := url.ParseQuery(strings.TrimPrefix(loc, "/releases/activate?"))
	form := url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv}, "from": {active}, "digest": {target.Get("digest")}, "reason": {"read amounts back"}}

	// Frank asks; erin, an admin outside payments, may not approve.
	asked := frank.post("/releases/activate", frank.withCSRF(form), nil)
	if !strings.HasPrefix(asked.URL.Path, "/changes/chg_") {
		t.Fatalf("activation landed on %s (%d), want a pending change", asked.URL, asked.Status)
	}
	if got := text(asked, "change-owners"); !strings.Contains(got, "refunds") || !strings.Contains(got, "group:payments") {
		t.Errorf("the change page does not say whose approval is needed: %q", got)
	}
	ch, err := changes.Get(ctx, in.DB.Read(), strings.TrimPrefix(asked.URL.Path, "/changes/"))
	if err != nil {
		t.Fatal(err)
	}
	seen := erin.get(asked.URL.Path)
	if seen.Doc.Find(`[data-testid="change-approve"]`).Length() != 0 || !strings.Contains(text(seen, "change-why"), "group:payments") {
		t.Errorf("erin (not in payments) is offered the approval, or not told why: %q", text(seen, "change-why"))
	}
	refused := erin.post(asked.URL.Path+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {ch.PayloadDigest}}), nil)
	if refused.Status != http.StatusForbidden || !strings.Contains(refused.Body, "group:payments") {
		t.Errorf("erin approving = %d, want 403 naming the owner group; body %q", refused.Status, refused.Body)
	}
	if got := demoHistory(t, in)[0].Digest; got != active {
		t.Fatalf("a refused approval moved the pointer to %s", got)
	}
	if ch, _ := changes.Get(ctx, in.DB.Read(), ch.ID); ch.Status != changes.Pending {
		t.Errorf("after the refusal the change is %s, want still pending", ch.Status)
	}

	// Erin asks the same; frank, second admin and in payments, approves.
	asked = erin.post("/releases/activate", erin.withCSRF(form), nil)
	if asked.Status != http.StatusOK {
		t.Fatalf("erin asking = %d %s", asked.Status, asked.Body)
	}
	cp := frank.get(asked.URL.Path)
	digest, _ := cp.Doc.Find(`input[name="digest"]`).Attr("value")
	if p := frank.post(asked.URL.Path+"/decide", frank.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil); p.Status != http.StatusOK || !strings.Contains(text(p, "change-status"), "applied") {
		t.Fatalf("frank approving: %d %q %q", p.Status, text(p, "change-status"), p.Body[:min(len(p.Body), 3000)])
	}
	if got := demoHistory(t, in)[0].Digest; got != target.Get("digest") {
		t.Errorf("after the owner's approval active %s, want %s", got, target.Get("digest"))
	}

	// A release that drops refunds (its skill set written as bare names)
	// needs refunds' owner too: the file it leaves says high-risk.
	bare := `{"model":"` + cur.Bundle.Model + `","prompt":"` + cur.Bundle.Prompt + `","tools":"` + cur.Bundle.Tools +
		`","approval":"` + cur.Bundle.Approval + `","routing":"` + cur.Bundle.Routing + `","contents":{"skills":["order_status","order_support","customer_email"]}}`
	pub = erin.noRedirect().post("/releases/publish", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"bundle": {bare}, "note": {"no refunds"}}), nil)
	target, _ = url.ParseQuery(strings.TrimPrefix(pub.Header.Get("Location"), "/releases/activate?"))
	now := demoHistory(t, in)[0].Digest
	asked = erin.post("/releases/activate", erin.withCSRF(url.Values{"agent": {releases.DefaultAgent}, "env": {releases.DefaultEnv},
		"from": {now}, "digest": {target.Get("digest")}, "reason": {"no refunds"}}), nil)
	if got := text(asked, "change-owners"); !strings.Contains(got, "refunds") || !strings.Contains(got, "group:payments") {
		t.Errorf("dropping the high-risk refunds skill by name does not need its owner: %q (%s)", got, asked.URL)
	}
}
