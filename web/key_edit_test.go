package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/keys"
)

// TestKeyScopesAndRateEdits: an admin changes a key's scopes and request
// rate limit on its page. Narrowing and lowering apply at once, audited;
// widening and raising wait for a second admin (the form says so before
// it is sent), and the agent calling with the key is refused what the
// pending change would allow until frank approves it. Bad input and a
// missing CSRF token change nothing; a change approved after the key was
// revoked fails in words; break glass applies at once.
func TestKeyScopesAndRateEdits(t *testing.T) {
	in := startWardenDemo(t, map[string]string{"WARDEN_BREAK_GLASS": "true"})
	ctx := context.Background()
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	k, secret := newKey(t, in, "status-bot", []string{"tool:lookup_order"}, 600, 60, nil)
	path := "/keys/" + k.ID
	stored := func() keys.Key {
		t.Helper()
		got, err := keys.ByID(ctx, in.DB.Read(), k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	scopes := func() string { return strings.Join(stored().Scopes, " ") }
	ask := func() int { return journey(t, in, secret, "Where is my order ORD-1003?", nil).Status }
	nothingRecorded := func(what string) {
		t.Helper()
		if n := countRows(t, in.DB, `SELECT COUNT(*) FROM changes`); n != 0 {
			t.Errorf("%s recorded %d changes", what, n)
		}
		if evs := append(adminEvents(t, in.DB, "key.scopes"), adminEvents(t, in.DB, "key.rate")...); len(evs) != 0 {
			t.Errorf("%s recorded key events %v", what, evs)
		}
	}

	show := erin.get(path)
	if show.Status != http.StatusOK || show.Doc.Find(`[data-testid="key-scopes-form"] input[value="tool:lookup_order"][checked]`).Length() != 1 ||
		show.Doc.Find(`[data-testid="key-rate-form"] input[name="rate_per_min"]`).AttrOr("value", "") != "600" {
		t.Fatalf("key page = %d: scopes form or rate form not filled from the key", show.Status)
	}
	for _, form := range []string{"key-scopes-form", "key-rate-form", "key-model-limits-form"} {
		if !strings.Contains(show.Doc.Find(`[data-testid="`+form+`"] [data-testid="needs-second-admin"]`).Text(), "Needs a second admin") {
			t.Errorf("%s does not say a widening needs a second admin before it is sent", form)
		}
	}
	if got := ask(); got != http.StatusForbidden {
		t.Fatalf("a journey of a skill the key lacks = %d, want 403", got)
	}

	// Refused: no CSRF token, bad scopes, odd numbers. Nothing changes.
	if p := erin.post(path+"/scopes", url.Values{"scopes": {"tool:lookup_order", "skill:order_status"}}, nil); p.Status != http.StatusForbidden {
		t.Errorf("scopes without CSRF = %d, want 403", p.Status)
	}
	if p := erin.post(path+"/rate", url.Values{"rate_per_min": {"60"}, "burst": {"6"}}, nil); p.Status != http.StatusForbidden {
		t.Errorf("rate without CSRF = %d, want 403", p.Status)
	}
	for _, bad := range []struct {
		name     string
		form     url.Values
		contains string
	}{
		{"unknown tool", url.Values{"scopes": {"tool:lookup_order"}, "scope_patterns": {"tool:nope"}}, `"tool:nope" is not a skill or tool Warden knows`},
		{"malformed pattern", url.Values{"scope_patterns": {"model:*-mini"}}, "one *, at its end"},
		{"unknown kind", url.Values{"scope_patterns": {"admin:all"}}, "is not a scope"},
		{"no scopes", url.Values{}, "at least one"},
	} {
		p := erin.post(path+"/scopes", erin.withCSRF(bad.form), nil)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-scopes"), bad.contains) || text(p, "form-errors") == "" {
			t.Errorf("%s: = %d, error %q; want 422 saying %q", bad.name, p.Status, text(p, "error-scopes"), bad.contains)
		}
	}
	for _, bad := range []struct{ rate, burst, field, contains string }{
		{"1e9", "60", "rate_per_min", "digits only"},
		{"1,000", "60", "rate_per_min", "digits only"},
		{" 5 ", "60", "rate_per_min", "digits only"},
		{"-5", "60", "rate_per_min", "cannot be negative"},
		{"", "60", "rate_per_min", "Enter the number"},
		{"0", "60", "rate_per_min", "between 1 and 600000"},
		{"600", "99999999999", "burst", "at most 10000"},
		{"600", "1.5", "burst", "digits only"},
	} {
		p := erin.post(path+"/rate", erin.withCSRF(url.Values{"rate_per_min": {bad.rate}, "burst": {bad.burst}}), nil)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-"+bad.field), bad.contains) {
			t.Errorf("rate %q burst %q = %d, error %q; want 422 saying %q", bad.rate, bad.burst, p.Status, text(p, "error-"+bad.field), bad.contains)
		}
		if v := p.Doc.Find(`#key_rate_per_min`).AttrOr("value", "?"); v != bad.rate {
			t.Errorf("rate %q: the form came back with %q, not as typed", bad.rate, v)
		}
	}
	if got := stored(); scopes() != "tool:lookup_order" || got.RatePerMin != 600 || got.Burst != 60 {
		t.Fatalf("refused edits changed the key: %q %d/%d", got.Scopes, got.RatePerMin, got.Burst)
	}
	nothingRecorded("refused edits")

	// Widening waits for a second admin; the key still cannot run the skill.
	landed := erin.post(path+"/scopes", erin.withCSRF(url.Values{"scopes": {"tool:lookup_order", "skill:order_status"}, "change_reason": {"status lookups"}}), nil)
	if scopes() != "tool:lookup_order" {
		t.Fatalf("widening applied before a second admin approved: %q", scopes())
	}
	chID := strings.TrimPrefix(landed.URL.Path, "/changes/")
	c, err := changes.Get(ctx, in.DB.Read(), chID)
	if err != nil || c.Kind != changes.KeyScopes || c.Subject != k.ID || c.TenantSlug != "acme" {
		t.Fatalf("widening landed on %s: %+v %v", landed.URL.Path, c, err)
	}
	if got := text(landed, "change-summary"); got != "Widen key status-bot's scopes: add skill:order_status" {
		t.Errorf("change summary = %q", got)
	}
	if row := landed.Doc.Find(`[data-testid="diff-adds"]`); row.Find(`[data-testid="diff-after"]`).Text() != "skill:order_status" {
		t.Errorf("the diff does not say what is added: %q", row.Text())
	}
	if row := landed.Doc.Find(`[data-testid="diff-scopes"]`); row.Find(`[data-testid="diff-before"]`).Text() != "tool:lookup_order" ||
		row.Find(`[data-testid="diff-after"]`).Text() != "skill:order_status, tool:lookup_order" {
		t.Errorf("the scopes diff reads %q", row.Text())
	}
	if own := erin.post("/changes/"+chID+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own widening = %d, want 403", own.Status)
	}
	if p := erin.get(path); p.Doc.Find(`[data-testid="pending-changes"] a[href="/changes/`+chID+`"]`).Length() != 1 {
		t.Error("the key's page does not show the pending widening")
	}
	if got := ask(); got != http.StatusForbidden {
		t.Errorf("a journey of the not-yet-approved skill = %d, want 403", got)
	}
	approveAsFrank(t, in, landed)
	if scopes() != "skill:order_status tool:lookup_order" {
		t.Fatalf("after frank approved, scopes = %q", scopes())
	}
	if got := ask(); got != http.StatusOK {
		t.Errorf("a journey of the approved skill = %d, want 200", got)
	}

	// Narrowing applies at once, audited, and the key is refused at once.
	p := erin.post(path+"/scopes", erin.withCSRF(url.Values{"scopes": {"tool:lookup_order"}}), nil)
	if p.URL.Path != path || text(p, "notice") != "Scopes saved. They apply from the key's next request." || scopes() != "tool:lookup_order" {
		t.Fatalf("narrowing landed on %s with %q; scopes %q", p.URL.Path, text(p, "notice"), scopes())
	}
	if evs := adminEvents(t, in.DB, "key.scopes"); len(evs) != 2 || evs[len(evs)-1].Tenant != "acme" {
		t.Errorf("key.scopes events = %+v, want the approved widening and the narrowing", evs)
	}
	if got := ask(); got != http.StatusForbidden {
		t.Errorf("a journey after narrowing = %d, want 403", got)
	}
	if p := erin.post(path+"/scopes", erin.withCSRF(url.Values{"scopes": {"tool:lookup_order"}}), nil); text(p, "notice") != "Those are the key's scopes; nothing changed." {
		t.Errorf("saving the same scopes says %q", text(p, "notice"))
	}

	// The rate limit: raising waits, lowering applies at once.
	landed = erin.post(path+"/rate", erin.withCSRF(url.Values{"rate_per_min": {"1200"}, "burst": {"60"}}), nil)
	if got := stored(); got.RatePerMin != 600 {
		t.Fatalf("raising the rate applied before a second admin approved: %d", got.RatePerMin)
	}
	if c, _ := changes.Get(ctx, in.DB.Read(), strings.TrimPrefix(landed.URL.Path, "/changes/")); c.Kind != changes.KeyRequestRate ||
		c.Summary != "Change key status-bot's rate limit from 600 requests a minute (burst 60) to 1200 requests a minute (burst 60)" {
		t.Errorf("raising the rate recorded %q %q", c.Kind, c.Summary)
	}
	approveAsFrank(t, in, landed)
	if got := stored(); got.RatePerMin != 1200 || got.Burst != 60 {
		t.Fatalf("after frank approved, rate = %d/%d", got.RatePerMin, got.Burst)
	}
	p = erin.post(path+"/rate", erin.withCSRF(url.Values{"rate_per_min": {"60"}, "burst": {"5"}}), nil)
	if got := stored(); p.URL.Path != path || text(p, "notice") != "Rate limit saved. It applies from the key's next request." || got.RatePerMin != 60 || got.Burst != 5 {
		t.Fatalf("lowering landed on %s %q; rate %d/%d", p.URL.Path, text(p, "notice"), got.RatePerMin, got.Burst)
	}

	// A raise approved after the limit was lowered meanwhile is refused:
	// the before the approver saw is no longer true.
	landed = erin.post(path+"/rate", erin.withCSRF(url.Values{"rate_per_min": {"100"}, "burst": {"5"}}), nil)
	erin.post(path+"/rate", erin.withCSRF(url.Values{"rate_per_min": {"50"}, "burst": {"5"}}), nil)
	frank := newBrowser(t, in.URL)
	frank.loginDev("frank")
	decide := func(changePath string) (changes.Change, page) {
		t.Helper()
		digest := frank.get(changePath).Doc.Find(`input[name="digest"]`).AttrOr("value", "")
		p := frank.post(changePath+"/decide", frank.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil)
		c, err := changes.Get(ctx, in.DB.Read(), strings.TrimPrefix(changePath, "/changes/"))
		if err != nil {
			t.Fatal(err)
		}
		return c, p
	}
	if c, p := decide(landed.URL.Path); p.Status != http.StatusConflict || c.Status != changes.Pending || !strings.Contains(p.Body, "requests a minute: 50") || stored().RatePerMin != 50 {
		t.Errorf("approving a raise of a limit lowered meanwhile: %d, %s, rate %d; want 409, still pending", p.Status, c.Status, stored().RatePerMin)
	}

	// A widening approved after the key was revoked is refused, in words.
	landed = erin.post(path+"/scopes", erin.withCSRF(url.Values{"scopes": {"tool:lookup_order", "read:tenant"}}), nil)
	if !strings.HasPrefix(landed.URL.Path, "/changes/") {
		t.Fatalf("adding read:tenant landed on %s", landed.URL.Path)
	}
	if p := erin.post(path+"/revoke", erin.withCSRF(nil), nil); p.Status != http.StatusOK {
		t.Fatalf("revoke = %d", p.Status)
	}
	if c, p := decide(landed.URL.Path); p.Status != http.StatusConflict || c.Status != changes.Pending || !strings.Contains(p.Body, "is now revoked") {
		t.Errorf("approving after the key was revoked: %d, %s; want 409, still pending", p.Status, c.Status)
	}
	if scopes() != "tool:lookup_order" {
		t.Errorf("a revoked key's scopes changed to %q", scopes())
	}
	if p := erin.post(path+"/scopes", erin.withCSRF(url.Values{"scopes": {"tool:lookup_order"}}), nil); p.Status != http.StatusConflict {
		t.Errorf("editing a revoked key = %d, want 409", p.Status)
	}

	// Break glass widens at once, recorded as such.
	k2, _ := newKey(t, in, "glass-bot", []string{"tool:lookup_order"}, 600, 60, nil)
	p = erin.post("/keys/"+k2.ID+"/scopes", erin.withCSRF(url.Values{"scopes": {"tool:lookup_order"}, "scope_patterns": {"tool:*"},
		"break_glass": {"yes"}, "change_reason": {"INC-7: every tool now"}}), nil)
	if got, _ := keys.ByID(ctx, in.DB.Read(), k2.ID); strings.Join(got.Scopes, " ") != "tool:* tool:lookup_order" ||
		text(p, "change-status") != "applied by break glass — not yet reviewed" {
		t.Errorf("break glass: scopes %q, change %q", got.Scopes, text(p, "change-status"))
	}
}
