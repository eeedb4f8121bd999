package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/keys"
)

// TestKeyExpiryEdit: an admin changes a key's expiry on its page. A key
// that expired is refused on the API; making its expiry later waits for
// a second admin (the form says so before it is sent), erin cannot
// approve her own change, and the key stays refused until frank approves
// it. Setting an earlier expiry applies at once, audited, and the key is
// refused from then; removing the expiry waits again. A date in the past
// or not a date is refused next to the field with the input kept, and
// changes nothing; a revoked key's expiry cannot be edited.
func TestKeyExpiryEdit(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	past := time.Now().Add(-time.Hour)
	k, secret := newKey(t, in, "expiring-bot", []string{"skill:order_status", "tool:lookup_order"}, 600, 60, &past)
	path := "/keys/" + k.ID
	stored := func() keys.Key {
		t.Helper()
		got, err := keys.ByID(ctx, in.DB.Read(), k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	expiry := func() string {
		if e := stored().ExpiresAt; e != nil {
			return e.UTC().Format(time.RFC3339)
		}
		return "never"
	}
	ask := func() apiResp { return journey(t, in, secret, "Where is my order ORD-1003?", nil) }
	refusedAsExpired := func(when string) {
		t.Helper()
		if r := ask(); r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Raw), "The key is expired.") {
			t.Errorf("%s: a journey = %d %s, want 401 saying the key is expired", when, r.Status, r.Raw)
		}
	}
	day := func(days int) time.Time {
		return time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, days)
	}
	was := past.UTC().Format(time.RFC3339)

	show := erin.get(path)
	if show.Status != http.StatusOK || show.Doc.Find(`[data-testid="key-expiry-form"] input[name="expires_at"]`).AttrOr("value", "") != past.UTC().Format("2006-01-02") {
		t.Fatalf("key page = %d: the expiry form is not filled from the key", show.Status)
	}
	if !strings.Contains(show.Doc.Find(`[data-testid="key-expiry-form"] [data-testid="needs-second-admin"]`).Text(), "Needs a second admin") {
		t.Error("the expiry form does not say a later expiry needs a second admin before it is sent")
	}
	refusedAsExpired("before any edit")

	// Refused: a day in the past, today (00:00 UTC has passed), not a
	// date, no CSRF token. Nothing changes; the form keeps the input.
	for _, bad := range []struct{ typed, contains string }{
		{day(-3).Format("2006-01-02"), "The expiry must be in the future."},
		{day(0).Format("2006-01-02"), "The expiry must be in the future."},
		{"31/01/2027", "Enter a date such as 2027-01-31"},
	} {
		p := erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {bad.typed}}), nil)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-expires_at"), bad.contains) || text(p, "form-errors") == "" {
			t.Errorf("expiry %q = %d, error %q; want 422 saying %q", bad.typed, p.Status, text(p, "error-expires_at"), bad.contains)
		}
		if v := p.Doc.Find(`#key_expires_at`).AttrOr("value", "?"); v != bad.typed {
			t.Errorf("expiry %q: the form came back with %q, not as typed", bad.typed, v)
		}
	}
	if p := erin.post(path+"/expiry", url.Values{"expires_at": {day(30).Format("2006-01-02")}}, nil); p.Status != http.StatusForbidden {
		t.Errorf("expiry without CSRF = %d, want 403", p.Status)
	}
	if got := expiry(); got != was {
		t.Fatalf("refused edits changed the expiry to %s", got)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM changes`); n != 0 {
		t.Errorf("refused edits recorded %d changes", n)
	}
	if evs := adminEvents(t, in.DB, "key.expiry"); len(evs) != 0 {
		t.Errorf("refused edits recorded %v", evs)
	}

	// Later (bringing the expired key back) waits for a second admin.
	later := day(30)
	landed := erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {later.Format("2006-01-02")}, "change_reason": {"INC-9: still needed"}}), nil)
	if got := expiry(); got != was {
		t.Fatalf("a later expiry applied before a second admin approved: %s", got)
	}
	chID := strings.TrimPrefix(landed.URL.Path, "/changes/")
	c, err := changes.Get(ctx, in.DB.Read(), chID)
	if err != nil || c.Kind != changes.KeyExpiry || c.Subject != k.ID || c.TenantSlug != "acme" {
		t.Fatalf("a later expiry landed on %s: %+v %v", landed.URL.Path, c, err)
	}
	wantSummary := "Change key expiring-bot's expiry from " + past.UTC().Format("2006-01-02 15:04 UTC") + " to " + later.Format("2006-01-02") + " 00:00 UTC"
	if got := text(landed, "change-summary"); got != wantSummary {
		t.Errorf("change summary = %q, want %q", got, wantSummary)
	}
	if row := landed.Doc.Find(`[data-testid="diff-expires at"]`); row.Find(`[data-testid="diff-before"]`).Text() != was ||
		row.Find(`[data-testid="diff-after"]`).Text() != later.Format(time.RFC3339) {
		t.Errorf("the expiry diff reads %q", row.Text())
	}
	if own := erin.post("/changes/"+chID+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own change = %d, want 403", own.Status)
	}
	if p := erin.get(path); p.Doc.Find(`[data-testid="pending-changes"] a[href="/changes/`+chID+`"]`).Length() != 1 {
		t.Error("the key's page does not show the pending expiry change")
	}
	refusedAsExpired("while the later expiry waits")
	approveAsFrank(t, in, landed)
	if got := expiry(); got != later.Format(time.RFC3339) {
		t.Fatalf("after frank approved, expiry = %s", got)
	}
	if r := ask(); r.Status != http.StatusOK {
		t.Errorf("a journey after the later expiry was approved = %d %s, want 200", r.Status, r.Raw)
	}

	// Earlier applies at once, audited; the key is refused from then.
	sooner := day(2)
	p := erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {sooner.Format("2006-01-02")}}), nil)
	if p.URL.Path != path || text(p, "notice") != "Expiry saved. The key is refused from then on." || expiry() != sooner.Format(time.RFC3339) {
		t.Fatalf("an earlier expiry landed on %s with %q; expiry %s", p.URL.Path, text(p, "notice"), expiry())
	}
	if v := p.Doc.Find(`#key_expires_at`).AttrOr("value", ""); v != sooner.Format("2006-01-02") {
		t.Errorf("the form shows expiry %q after the save", v)
	}
	evs := adminEvents(t, in.DB, "key.expiry")
	if len(evs) != 2 || evs[len(evs)-1].Tenant != "acme" || evs[len(evs)-1].Subject.ID != k.ID {
		t.Errorf("key.expiry events = %+v, want the approved later expiry and the earlier one", evs)
	}
	if _, err := keys.Authenticate(ctx, in.DB.Read(), secret, sooner.Add(time.Second)); err != keys.ErrExpired {
		t.Errorf("authenticating just after the earlier expiry = %v, want the key expired", err)
	}
	if r := ask(); r.Status != http.StatusOK {
		t.Errorf("a journey before the earlier expiry = %d, want 200", r.Status)
	}
	if p := erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {sooner.Format("2006-01-02")}}), nil); text(p, "notice") != "That is the key's expiry; nothing changed." {
		t.Errorf("saving the same expiry says %q", text(p, "notice"))
	}

	// Removing it loosens: it waits, then applies once approved.
	landed = erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {""}}), nil)
	if expiry() != sooner.Format(time.RFC3339) {
		t.Fatalf("removing the expiry applied before a second admin approved: %s", expiry())
	}
	if got := text(landed, "change-summary"); got != "Remove key expiring-bot's expiry ("+sooner.Format("2006-01-02")+" 00:00 UTC)" {
		t.Errorf("removal summary = %q", got)
	}
	approveAsFrank(t, in, landed)
	if expiry() != "never" {
		t.Fatalf("after frank approved the removal, expiry = %s", expiry())
	}
	if _, err := keys.Authenticate(ctx, in.DB.Read(), secret, time.Now().AddDate(10, 0, 0)); err != nil {
		t.Errorf("authenticating in ten years without an expiry = %v", err)
	}

	// A revoked key's expiry does not change, and the form is gone.
	if p := erin.post(path+"/revoke", erin.withCSRF(nil), nil); p.Status != http.StatusOK {
		t.Fatalf("revoke = %d", p.Status)
	}
	p = erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {day(5).Format("2006-01-02")}}), nil)
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "The key is revoked, so its scopes, rate limit and expiry no longer change.") {
		t.Errorf("editing a revoked key's expiry = %d, want 409 saying it is revoked", p.Status)
	}
	if expiry() != "never" || len(adminEvents(t, in.DB, "key.expiry")) != 3 {
		t.Errorf("a revoked key's expiry changed to %s", expiry())
	}
	if erin.get(path).Doc.Find(`[data-testid="key-expiry-form"]`).Length() != 0 {
		t.Error("a revoked key's page offers the expiry form")
	}
}

// A key whose expiry was set to the minute elsewhere (the API, the CLI)
// shows its day in the form; sent back unchanged, the expiry stays as it
// is (it was moved to 00:00 that day, an earlier expiry applied at once).
func TestKeyExpiryFormKeepsAnExpiryToTheMinute(t *testing.T) {
	in := startWardenDemo(t, nil)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	at := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 10).Add(15*time.Hour + 30*time.Minute)
	k, _ := newKey(t, in, "minute-bot", []string{"skill:order_status"}, 600, 60, &at)
	path := "/keys/" + k.ID
	shown := erin.get(path).Doc.Find(`#key_expires_at`).AttrOr("value", "")
	if shown != at.Format("2006-01-02") {
		t.Fatalf("the form shows %q, want %q", shown, at.Format("2006-01-02"))
	}
	p := erin.post(path+"/expiry", erin.withCSRF(url.Values{"expires_at": {shown}}), nil)
	if p.Status != http.StatusOK || !strings.Contains(p.URL.RawQuery, "done=expiry_unchanged") {
		t.Errorf("sending the form unchanged = %d at %s, want the key's page saying nothing changed", p.Status, p.URL)
	}
	got, err := keys.ByID(context.Background(), in.DB.Read(), k.ID)
	if err != nil || got.ExpiresAt == nil || !got.ExpiresAt.Equal(at) {
		t.Errorf("expiry is %v (%v), want it kept at %s", got.ExpiresAt, err, at.Format(time.RFC3339))
	}
	if evs := adminEvents(t, in.DB, "key.expiry"); len(evs) != 0 {
		t.Errorf("an unchanged form recorded %v", evs)
	}
}
