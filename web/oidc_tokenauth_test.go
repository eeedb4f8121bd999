package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Issue 23, finding 3: with auto token-endpoint authentication only a
// refused client makes Warden try client_secret_post; any other refusal
// is the one reported, and the secret is not sent again for a dead code.
func TestAutoTokenAuthReportsTheRealRefusal(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	idp.accepts = "basic" // registered for basic; post would be invalid_client
	in := startWarden(t, merged(idp.env(), map[string]string{"WARDEN_OIDC_TOKEN_AUTH": "auto"}))
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	callback := b.recordCallback()
	if home := b.signIn(); home.URL.Path != "/" {
		t.Fatalf("sign-in ended at %s: %s", home.URL, text(home, "login-error"))
	}

	// A new sign-in's state with the code already redeemed.
	state := b.startLogin().Query().Get("state")
	replay, _ := url.Parse(*callback)
	q := replay.Query()
	q.Set("state", state)
	replay.RawQuery = q.Encode()
	_, before := idp.counts()
	p := b.get(replay.String())
	if _, after := idp.counts(); after-before != 1 {
		t.Errorf("the token endpoint saw %d requests for a used code, want 1 (no fallback to client_secret_post)", after-before)
	}
	if msg := text(p, "login-error"); p.Status != http.StatusUnauthorized || !strings.Contains(msg, "invalid_grant") || strings.Contains(msg, "invalid_client") {
		t.Errorf("replayed code = %d %q, want 401 saying invalid_grant", p.Status, msg)
	}
	ev := lastAudit(t, in.DB)
	if detail, _ := ev.Details["detail"].(string); ev.Subject.ID != "code_exchange_failed" || !strings.Contains(detail, "invalid_grant") {
		t.Errorf("audit = %s %v, want code_exchange_failed with invalid_grant", ev.Subject.ID, ev.Details)
	}
	if logs := in.Logs.String(); !strings.Contains(logs, "token endpoint answered invalid_grant") || strings.Contains(logs, "invalid_client") {
		t.Errorf("the log does not say invalid_grant (or says invalid_client):\n%s", logs)
	}

	// A provider that takes only post still gets there: basic is refused
	// as a client, post is tried once.
	idp.set(func(p *testProvider) { p.accepts = "post" })
	_, before = idp.counts()
	if home := newBrowser(t, in.URL).signIn(); home.URL.Path != "/" {
		t.Errorf("auto against a post-only provider ended at %s: %s", home.URL, text(home, "login-error"))
	}
	if _, after := idp.counts(); after-before != 2 {
		t.Errorf("the token endpoint saw %d requests, want 2 (basic refused, then post)", after-before)
	}
	// A wrong secret is refused either way: the first refusal is reported.
	idp.set(func(p *testProvider) { p.accepts, p.secret = "", "rotated" })
	if p := newBrowser(t, in.URL).signIn(); !strings.Contains(text(p, "login-error"), "WARDEN_OIDC_CLIENT_SECRET") {
		t.Errorf("wrong secret = %d %q, want a sentence naming WARDEN_OIDC_CLIENT_SECRET", p.Status, text(p, "login-error"))
	}
}
