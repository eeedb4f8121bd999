package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/wait"
)

// createKeyInConsole creates a key through the console form and returns
// it with the two secrets its shown-once page displays.
func createKeyInConsole(t *testing.T, in *instance, b *browser, name string, scopes ...string) (keys.Key, string, string) {
	t.Helper()
	res := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {name}, "scopes": scopes, "rate_per_min": {"600"}, "burst": {"60"},
	}), nil)
	if res.Status != http.StatusOK || !strings.HasSuffix(res.URL.Path, "/created") {
		t.Fatalf("create = %d at %s: %s", res.Status, res.URL, text(res, "form-errors"))
	}
	secret, callback := text(res, "new-key-secret"), text(res, "new-callback-secret")
	if !strings.HasPrefix(secret, "wk_") || !strings.HasPrefix(callback, "whsec_") || len(callback) != len("whsec_")+40 {
		t.Fatalf("shown-once page shows key %q and callback secret %q", secret, callback)
	}
	k, err := keys.Authenticate(context.Background(), in.DB.Read(), secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k, secret, callback
}

func TestCallbackVerifiesWithTheSecretShownAtCreation(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("erin")
	k, secret, callback := createKeyInConsole(t, in, b, "refund-agent", "tool:issue_refund")
	created := "/keys/" + k.ID + "/created"
	if again := b.get(created); strings.Contains(again.Body, callback) || text(again, "new-callback-secret") != "" || text(again, "secret-gone") == "" {
		t.Error("reloading the shown-once page shows the callback secret again")
	}

	cb := &callbackServer{}
	srv := httptest.NewServer(cb)
	defer srv.Close()
	r := propose(t, in, secret, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary": "Refund $45.50 for ORD-1005", "reason": "double charge", "callback_url": srv.URL,
	}, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	decide(t, in, r.str("id"), approvals.Approve, "")
	var n int
	if !wait.For(15*time.Second, func() bool {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		n = len(cb.bodies)
		return n >= 2
	}) {
		t.Fatalf("%d callbacks, want the approval and the execution", n)
	}

	var stored string
	if err := in.DB.Read().QueryRow(`SELECT secret_hash FROM virtual_keys WHERE id = ?`, k.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret))
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for i, body := range cb.bodies {
		if !verify(callback, cb.sigs[i], body) {
			t.Errorf("callback %d (%q) does not verify with the callback secret shown at creation", i, cb.sigs[i])
		}
		if verify(stored, cb.sigs[i], body) || verify(hex.EncodeToString(sum[:]), cb.sigs[i], body) {
			t.Errorf("callback %d verifies with the secret_hash a copy of the database holds", i)
		}
	}
}

func TestAdminRotatesCallbackSecretAndSeesItOnce(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()
	k, _, old := createKeyInConsole(t, in, b, "gift-agent", "tool:lookup_order")
	sealer := in.Agent.Journeys.Sealer()

	show := b.get("/keys/" + k.ID)
	if show.Status != http.StatusOK || !strings.Contains(text(show, "callback-secret-state"), "signed with its callback secret") || strings.Contains(show.Body, old) {
		t.Fatalf("key page = %d, callback state %q", show.Status, text(show, "callback-secret-state"))
	}
	// The sentence reads "…, set 2026-12-01 01:52:03 UTC." with its space and full stop.
	if got := text(show, "callback-secret-state"); !regexp.MustCompile(`, set \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$`).MatchString(got) {
		t.Errorf("callback state reads %q, want \", set YYYY-MM-DD HH:MM:SS UTC.\"", got)
	}
	link, _ := show.Doc.Find(`[data-testid="callback-secret-rotate"]`).Attr("href")
	confirm := b.get(link)
	if got := text(confirm, "confirm-effect"); confirm.Status != http.StatusOK || !strings.Contains(got, "wk_"+k.Prefix) || !strings.Contains(got, "24 hours") {
		t.Fatalf("confirmation = %d %q, want the key and the grace period", confirm.Status, got)
	}
	action, _ := confirm.Doc.Find(`[data-testid="confirm"] form[method="post"]`).Attr("action")
	if action != link {
		t.Fatalf("the confirmation posts to %q, want %q", action, link)
	}
	before := auditCount(t, in.DB)
	if got, _ := keys.CallbackSecrets(ctx, in.DB.Read(), sealer, k.ID, time.Now()); !slices.Equal(got, []string{old}) {
		t.Fatal("opening the confirmation changed the callback secret")
	}
	if p := b.post(action, url.Values{}, nil); p.Status != http.StatusForbidden {
		t.Errorf("rotation without a CSRF token = %d, want 403", p.Status)
	}
	if got, _ := keys.CallbackSecrets(ctx, in.DB.Read(), sealer, k.ID, time.Now()); !slices.Equal(got, []string{old}) || auditCount(t, in.DB) != before {
		t.Fatal("a rotation without a CSRF token changed something")
	}

	res := b.post(action, b.withCSRF(nil), nil)
	fresh := text(res, "new-callback-secret")
	if res.Status != http.StatusOK || res.URL.Path != "/keys/"+k.ID || !strings.HasPrefix(fresh, "whsec_") || fresh == old {
		t.Fatalf("rotation = %d at %s showing %q, want the key page with a new secret", res.Status, res.URL, fresh)
	}
	if n := strings.Count(res.Body, fresh); n != 1 {
		t.Errorf("the new secret appears %d times, want once", n)
	}
	if strings.Contains(res.Body, old) {
		t.Error("the key page shows the old secret")
	}
	if !strings.Contains(res.Body, "will not be shown again") || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("shown-once page: warning %v, Cache-Control %q", strings.Contains(res.Body, "will not be shown again"), res.Header.Get("Cache-Control"))
	}
	again := b.get("/keys/" + k.ID)
	if again.Status != http.StatusOK || strings.Contains(again.Body, fresh) || text(again, "new-callback-secret") != "" {
		t.Error("a second visit to the key page shows the new secret again")
	}
	if !regexp.MustCompile(`replaced also signs them until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.`).MatchString(text(again, "callback-secret-state")) {
		t.Errorf("key page says %q, want the previous secret's grace", text(again, "callback-secret-state"))
	}
	if got, _ := keys.CallbackSecrets(ctx, in.DB.Read(), sealer, k.ID, time.Now()); !slices.Equal(got, []string{fresh, old}) {
		t.Errorf("after rotation %d secrets sign, want the new and the old", len(got))
	}
	if got, _ := keys.CallbackSecrets(ctx, in.DB.Read(), sealer, k.ID, time.Now().Add(keys.CallbackGrace)); !slices.Equal(got, []string{fresh}) {
		t.Errorf("after the grace period %d secrets sign, want the new one alone", len(got))
	}

	evs := adminEvents(t, in.DB, "key.callback_secret_rotated")
	if len(evs) != 1 {
		t.Fatalf("key.callback_secret_rotated events = %d, want 1", len(evs))
	}
	raw, _ := json.Marshal(evs[0])
	if evs[0].Tenant != "acme" || evs[0].Subject.ID != k.ID || evs[0].Actor.Type != "principal" || evs[0].Actor.ID == "" {
		t.Errorf("audit event = %s, want erin rotating the key in acme", raw)
	}
	for _, s := range []string{fresh, old} {
		body := strings.TrimPrefix(s, "whsec_")
		if strings.Contains(string(raw), body) || strings.Contains(in.Logs.String(), body) {
			t.Error("a callback secret is in the audit trail or the logs")
		}
	}
}

func TestNonAdminCannotRotateCallbackSecret(t *testing.T) {
	in, admin := adminSession(t, "erin")
	k, _, secret := createKeyInConsole(t, in, admin, "gift-agent", "tool:lookup_order")
	for _, user := range []string{"alice", "carol", "dave"} {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		before := auditCount(t, in.DB)
		for _, p := range []page{
			b.get("/keys/" + k.ID),
			b.get("/keys/" + k.ID + "/callback-secret/rotate"),
			b.post("/keys/"+k.ID+"/callback-secret/rotate", b.withCSRF(nil), nil),
		} {
			if p.Status != http.StatusForbidden || strings.Contains(p.Body, "whsec_") {
				t.Errorf("%s: %s = %d, want 403 and no secret", user, p.URL.Path, p.Status)
			}
		}
		if n := auditCount(t, in.DB) - before; n != 0 {
			t.Errorf("%s's refused requests wrote %d audit events", user, n)
		}
	}
	got, _ := keys.CallbackSecrets(context.Background(), in.DB.Read(), in.Agent.Journeys.Sealer(), k.ID, time.Now())
	if !slices.Equal(got, []string{secret}) {
		t.Errorf("after refused rotations %d secrets sign, want the original alone", len(got))
	}
}

// Keys from before callback secrets get none by themselves: the key page
// says so, and the first rotation generates one with nothing to keep.
func TestKeyWithoutCallbackSecretGetsOneFromTheKeyPage(t *testing.T) {
	in, b := adminSession(t, "erin")
	k, _, _ := createKeyInConsole(t, in, b, "old-agent", "tool:lookup_order")
	if _, err := in.DB.Read().Exec(`UPDATE virtual_keys SET callback_secret_sealed = NULL, callback_secret_set_at = NULL WHERE id = ?`, k.ID); err != nil {
		t.Fatal(err)
	}
	if list := b.get("/keys"); text(list, "key-no-callback-secret-"+k.ID) == "" {
		t.Error("the key list does not mark the key without a callback secret")
	}
	show := b.get("/keys/" + k.ID)
	if got := text(show, "callback-secret-state"); !strings.Contains(got, "no callbacks until you generate one") {
		t.Errorf("key page says %q, want that the agent gets no callbacks", got)
	}
	link, _ := show.Doc.Find(`[data-testid="callback-secret-rotate"]`).Attr("href")
	confirm := b.get(link)
	if !strings.Contains(text(confirm, "confirm-effect"), "no callbacks until this is done") {
		t.Errorf("confirmation says %q", text(confirm, "confirm-effect"))
	}
	res := b.post(link, b.withCSRF(nil), nil)
	fresh := text(res, "new-callback-secret")
	if !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("generation = %d at %s, no secret shown", res.Status, res.URL)
	}
	got, err := keys.CallbackSecrets(context.Background(), in.DB.Read(), in.Agent.Journeys.Sealer(), k.ID, time.Now())
	if err != nil || !slices.Equal(got, []string{fresh}) {
		t.Errorf("CallbackSecrets = %d secrets, %v; want the generated one alone", len(got), err)
	}
}
