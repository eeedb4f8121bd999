package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/wait"
)

// Issue 12: sign-in against providers as they really are, server-side
// sessions, real sign-out, bound CSRF.

func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestSignInWithEachAdvertisedAlgorithm(t *testing.T) {
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA} {
		t.Run(string(alg), func(t *testing.T) {
			idp := newTestProvider(t, alg)
			in := startWarden(t, idp.env())
			in.waitReady(t)
			home := newBrowser(t, in.URL).signIn()
			if home.URL.Path != "/" || text(home, "whoami-name") != "Tess Provider" {
				t.Fatalf("sign-in with an %s ID token ended at %s (%d): %s\n%s", alg, home.URL, home.Status, text(home, "login-error"), in.Logs.String())
			}
		})
	}
}

func TestSignOutEndsTheSessionOnTheServer(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.signIn()
	copied := b.sessionCookieValue()
	if copied == "" {
		t.Fatal("no session cookie after sign-in")
	}
	// The cookie is a bare random token, nothing to decode.
	if len(copied) != 64 || strings.ContainsAny(copied, "|=") {
		t.Errorf("session cookie %q is not a 64-hex-digit token", copied)
	}
	hint := idp.lastIssued()

	out := b.continueSignOut(b.post("/auth/logout", url.Values{"_csrf": {b.csrf()}}, nil))
	if out.URL.Path != "/login" || text(out, "signed-out") == "" {
		t.Fatalf("sign-out ended at %s (%d), want the sign-in page saying so", out.URL, out.Status)
	}
	// RP-initiated logout: the provider's end-session endpoint was called
	// with the session's ID token and the way back to the sign-in page.
	calls := idp.endSessionCalls()
	if len(calls) != 1 {
		t.Fatalf("end-session endpoint called %d times, want 1", len(calls))
	}
	if calls[0].Get("id_token_hint") != hint || hint == "" {
		t.Errorf("id_token_hint = %.20q…, want the ID token of the sign-in", calls[0].Get("id_token_hint"))
	}
	if got := calls[0].Get("post_logout_redirect_uri"); got != in.URL+"/login" {
		t.Errorf("post_logout_redirect_uri = %q, want %s/login", got, in.URL)
	}

	// The cookie copied before sign-out opens nothing any more.
	thief := newBrowser(t, in.URL)
	u, _ := url.Parse(in.URL)
	thief.c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookieName, Value: copied, Path: "/"}})
	for _, path := range []string{"/approvals", "/keys", "/sessions"} {
		if p := thief.get(path); p.URL.Path != "/login" {
			t.Errorf("replayed cookie: GET %s ended at %s (%d), want /login", path, p.URL, p.Status)
		}
	}
}

func TestLocalSignOutWithoutEndSessionEndpoint(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	idp.endSession = false
	in := startWarden(t, idp.env())
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.signIn()
	out := b.post("/auth/logout", url.Values{"_csrf": {b.csrf()}}, nil)
	if out.URL.Path != "/login" || text(out, "signed-out") == "" || len(idp.endSessionCalls()) != 0 {
		t.Fatalf("sign-out ended at %s with %d end-session calls, want /login and none", out.URL, len(idp.endSessionCalls()))
	}
}

// clock is a sessions clock a test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestIdleAndAbsoluteSessionExpiry(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	clk := newClock()
	in := startClock(t, merged(idp.env(), map[string]string{"WARDEN_SESSION_IDLE": "30m", "WARDEN_SESSION_MAX": "2h"}), false, clk.now)
	in.waitReady(t)

	// Used every 20 minutes, a session outlives the idle timeout...
	b := newBrowser(t, in.URL)
	b.signIn()
	for range 5 { // 100 minutes
		clk.advance(20 * time.Minute)
		if p := b.get("/"); p.URL.Path != "/" {
			t.Fatalf("session used every 20 minutes ended at %s after %v", p.URL, 20*time.Minute)
		}
	}
	// ...but not its lifetime.
	clk.advance(21 * time.Minute)
	if p := b.get("/"); p.URL.Path != "/login" {
		t.Errorf("after 2h1m GET / ended at %s, want /login (absolute lifetime)", p.URL)
	}

	// Left alone for 31 minutes, a session has ended.
	b2 := newBrowser(t, in.URL)
	b2.signIn()
	clk.advance(29 * time.Minute)
	if p := b2.get("/"); p.URL.Path != "/" {
		t.Fatalf("after 29 idle minutes GET / ended at %s, want /", p.URL)
	}
	clk.advance(31 * time.Minute)
	if p := b2.get("/"); p.URL.Path != "/login" {
		t.Errorf("after 31 idle minutes GET / ended at %s, want /login", p.URL)
	}
}

func TestPlantedCSRFTokenFromAnotherSessionIsRefused(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	attacker := newBrowser(t, in.URL)
	attacker.loginDev("mallory")
	planted := attacker.csrf()
	victim := newBrowser(t, in.URL)
	victim.loginDev("erin")
	// What a sibling subdomain could plant: the old double-submit cookie and
	// a form value, both the attacker's own.
	u, _ := url.Parse(in.URL)
	victim.c.Jar.SetCookies(u, []*http.Cookie{{Name: "warden_csrf", Value: planted, Path: "/"}, {Name: "_csrf", Value: planted, Path: "/"}})
	before := auditCount(t, in.DB)
	for _, hdr := range []map[string]string{nil, {"X-CSRF-Token": planted}} {
		form := url.Values{}
		if hdr == nil {
			form.Set("_csrf", planted)
		}
		if p := victim.post("/tenants", merge(form, url.Values{"slug": {"forged"}, "name": {"Forged"}}), hdr); p.Status != http.StatusForbidden {
			t.Errorf("POST /tenants with another session's token (%v) = %d, want 403", hdr, p.Status)
		}
	}
	if got := auditCount(t, in.DB); got != before {
		t.Errorf("audit count %d after forged posts, want %d", got, before)
	}
	// The victim's own token works, and an Origin from elsewhere does not.
	own := victim.csrf()
	if own == planted {
		t.Fatal("two sessions share a CSRF token")
	}
	if p := victim.post("/audit/verify", url.Values{"_csrf": {own}}, map[string]string{"Origin": "https://evil.example"}); p.Status != http.StatusForbidden {
		t.Errorf("POST with a foreign Origin = %d, want 403", p.Status)
	}
	if p := victim.post("/audit/verify", url.Values{"_csrf": {own}}, map[string]string{"Sec-Fetch-Site": "same-site"}); p.Status != http.StatusForbidden {
		t.Errorf("POST from a sibling site (Sec-Fetch-Site: same-site) = %d, want 403", p.Status)
	}
	if p := victim.post("/audit/verify", url.Values{"_csrf": {own}}, map[string]string{"Origin": in.URL, "Sec-Fetch-Site": "same-origin"}); p.Status != http.StatusOK {
		t.Errorf("POST with the session's own token = %d, want 200", p.Status)
	}
}

func merge(a, b url.Values) url.Values {
	out := url.Values{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestAnonymousCallbacksDoNotGrowTheAuditTrail(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	before := auditCount(t, in.DB)
	b := newBrowser(t, in.URL)
	queries := []string{"", "?code=x", "?state=forged&code=x", "?error=access_denied", "?error=access_denied&state=forged"}
	for i := range 200 {
		p := b.get("/auth/callback" + queries[i%len(queries)])
		if p.Status != http.StatusBadRequest || text(p, "login-error") == "" {
			t.Fatalf("anonymous callback %d = %d, want 400 with a message", i, p.Status)
		}
	}
	if got := auditCount(t, in.DB); got > before+3 {
		t.Errorf("200 anonymous callbacks added %d audit events, want at most a handful", got-before)
	}
	var ready struct {
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(b.get("/readyz").Body), &ready); err != nil {
		t.Fatal(err)
	}
	if got := ready.Details["refused_callbacks"]; got != float64(200) {
		t.Errorf("readyz refused_callbacks = %v, want 200", got)
	}
	if !strings.Contains(in.Logs.String(), "sign-in callback refused") {
		t.Error("refused callbacks are not logged")
	}
}

func TestWrittenLoginFailuresAreRateLimitedPerAddress(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	idp.refuseScope = "groups"
	in := startWarden(t, idp.env())
	in.waitReady(t)
	before := auditCount(t, in.DB)
	b := newBrowser(t, in.URL)
	for range 40 {
		if p := b.signIn(); p.Status != http.StatusUnauthorized {
			t.Fatalf("refused sign-in = %d, want 401", p.Status)
		}
	}
	added := auditCount(t, in.DB) - before
	if added > failureBurst+2 {
		t.Errorf("40 refused sign-ins from one address wrote %d events, want at most the burst %d and a summary", added, failureBurst)
	}
	evs, err := audit.List(t.Context(), in.DB.Read(), audit.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, ev := range evs {
		if ev.Verb == "auth.login_failed_suppressed" {
			summaries++
		}
	}
	if summaries != 1 {
		t.Errorf("summary events = %d, want 1 (one a minute)", summaries)
	}
}

func TestProviderErrorWithWrongStateDoesNotCancelAnotherTab(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	tab := b.startLogin() // the provider's page, open in one tab

	// A link anyone can send: the provider "denied" with a state of their own.
	p := b.get("/auth/callback?error=access_denied&error_description=nope&state=" + randomToken())
	if p.Status != http.StatusBadRequest {
		t.Fatalf("forged ?error= = %d, want 400", p.Status)
	}
	home := b.get(tab.String())
	if home.URL.Path != "/" || text(home, "whoami-name") != "Tess Provider" {
		t.Fatalf("the sign-in in the other tab ended at %s (%d): %s", home.URL, home.Status, text(home, "login-error"))
	}
}

func TestTwoTabsSignInInAnyOrder(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	first, second := b.startLogin(), b.startLogin()
	if p := b.get(second.String()); p.URL.Path != "/" {
		t.Fatalf("second tab ended at %s (%d): %s", p.URL, p.Status, text(p, "login-error"))
	}
	if p := b.get(first.String()); p.URL.Path != "/" {
		t.Fatalf("first tab, after the second signed in, ended at %s (%d): %s", p.URL, p.Status, text(p, "login-error"))
	}
	// Each sign-in in progress is single use...
	if p := b.get(first.String()); p.Status != http.StatusBadRequest && p.URL.Path != "/" {
		t.Errorf("replaying a finished tab = %d at %s", p.Status, p.URL)
	}
	// ...and short-lived.
	clk := newClock()
	in2 := startClock(t, idp.env(), false, clk.now)
	in2.waitReady(t)
	b2 := newBrowser(t, in2.URL)
	stale := b2.startLogin()
	clk.advance(loginMaxAge + time.Second)
	if p := b2.get(stale.String()); p.Status != http.StatusBadRequest {
		t.Errorf("a sign-in finished after %v = %d at %s, want 400", loginMaxAge, p.Status, p.URL)
	}
}

func TestIssuerMismatchIsNotUnreachable(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	idp.announced = idp.srv.URL // the provider's own form...
	env := idp.env()
	env["WARDEN_OIDC_ISSUER"] = idp.srv.URL + "/" // ...and the trailing-slash trap
	in := startWarden(t, env)
	if !wait.For(10*time.Second, func() bool { return in.Server.auth.status().State == providerIssuerMismatch }) {
		t.Fatalf("provider state = %q, want %q", in.Server.auth.status().State, providerIssuerMismatch)
	}
	b := newBrowser(t, in.URL)
	login := b.get("/login")
	if login.Doc.Find(`[data-testid="idp-issuer-mismatch"]`).Length() != 1 || login.Doc.Find(`[data-testid="idp-unreachable"]`).Length() != 0 {
		t.Errorf("sign-in page does not report an issuer mismatch:\n%s", login.Body)
	}
	if msg := text(login, "idp-issuer-mismatch"); !strings.Contains(msg, idp.srv.URL+"/") || !strings.Contains(msg, "WARDEN_OIDC_ISSUER") {
		t.Errorf("mismatch message %q names neither the configured issuer nor the setting", msg)
	}
	var ready struct {
		Details map[string]any `json:"details"`
	}
	_ = json.Unmarshal([]byte(b.get("/readyz").Body), &ready)
	if ready.Details["identity_provider"] != providerIssuerMismatch || ready.Details["identity_provider_issuer_announced"] != idp.srv.URL {
		t.Errorf("readyz details = %v, want an issuer mismatch naming %s", ready.Details, idp.srv.URL)
	}
	if logs := in.Logs.String(); !strings.Contains(logs, "issuer mismatch") || strings.Contains(logs, "unreachable") {
		t.Errorf("start-up log does not say issuer mismatch (or says unreachable):\n%s", logs)
	}
}

func TestTokenEndpointAuthMethod(t *testing.T) {
	tests := []struct {
		name      string
		setting   string   // WARDEN_OIDC_TOKEN_AUTH
		advertise []string // token_endpoint_auth_methods_supported
		accepts   string
		ok        bool
	}{
		{"discovery says post", "", []string{"client_secret_post"}, "post", true},
		{"discovery says basic", "", []string{"client_secret_basic"}, "basic", true},
		{"discovery silent means basic", "", nil, "basic", true},
		{"both advertised, provider takes only post", "", []string{"client_secret_basic", "client_secret_post"}, "post", true},
		{"setting post", "post", []string{"client_secret_basic"}, "post", true},
		{"setting basic against a post-only provider", "basic", []string{"client_secret_post"}, "post", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newTestProvider(t, jose.ES256)
			idp.authMethods, idp.accepts = tt.advertise, tt.accepts
			in := startWarden(t, merged(idp.env(), map[string]string{"WARDEN_OIDC_TOKEN_AUTH": tt.setting}))
			in.waitReady(t)
			p := newBrowser(t, in.URL).signIn()
			if ok := p.URL.Path == "/"; ok != tt.ok {
				t.Errorf("sign-in ended at %s (%d) %s, want success %v", p.URL, p.Status, text(p, "login-error"), tt.ok)
			}
		})
	}
	// Auto decides at every sign-in: a provider that changes its method
	// does not break sign-in until a restart.
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, merged(idp.env(), map[string]string{"WARDEN_OIDC_TOKEN_AUTH": "auto"}))
	in.waitReady(t)
	for _, accepts := range []string{"post", "basic", "post"} {
		idp.set(func(p *testProvider) { p.accepts = accepts })
		if p := newBrowser(t, in.URL).signIn(); p.URL.Path != "/" {
			t.Errorf("auto against a provider taking %s: sign-in ended at %s %s", accepts, p.URL, text(p, "login-error"))
		}
	}
}

func TestRefusedScopeNamesTheSetting(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	idp.refuseScope = "groups"
	in := startWarden(t, idp.env())
	in.waitReady(t)
	p := newBrowser(t, in.URL).signIn()
	if msg := text(p, "login-error"); p.Status != http.StatusUnauthorized || !strings.Contains(msg, "WARDEN_OIDC_SCOPES") {
		t.Fatalf("sign-in with a refused scope = %d %q, want an error naming WARDEN_OIDC_SCOPES", p.Status, msg)
	}
	in2 := startWarden(t, merged(idp.env(), map[string]string{"WARDEN_OIDC_SCOPES": "openid profile email"}))
	in2.waitReady(t)
	if p := newBrowser(t, in2.URL).signIn(); p.URL.Path != "/" {
		t.Errorf("without the refused scope sign-in ended at %s: %s", p.URL, text(p, "login-error"))
	}
}

func TestRoleRemovedAtProviderStopsAtNextSignIn(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	laptop := newBrowser(t, in.URL)
	laptop.signIn()
	if p := laptop.get("/tenants"); p.Status != http.StatusOK {
		t.Fatalf("admin GET /tenants = %d", p.Status)
	}
	idp.set(func(p *testProvider) { p.groups = []string{"warden-tenant-*"} }) // admin removed
	newBrowser(t, in.URL).signIn()                                            // the next sign-in, anywhere
	if p := laptop.get("/tenants"); p.Status != http.StatusForbidden {
		t.Errorf("after the role was removed and the user signed in again, the old session's GET /tenants = %d, want 403", p.Status)
	}
}

func TestAdminRevokesSessions(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	alice1, alice2 := newBrowser(t, in.URL), newBrowser(t, in.URL)
	alice1.loginDev("alice")
	alice2.loginDev("alice")
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")

	list := erin.get("/sessions")
	if list.Status != http.StatusOK || text(list, "sessions-count") != "4 live sessions" {
		t.Fatalf("GET /sessions = %d, count %q, want 4 live sessions", list.Status, text(list, "sessions-count"))
	}
	if alice := newBrowser(t, in.URL); true {
		alice.loginDev("alice")
		if p := alice.get("/sessions"); p.Status != http.StatusForbidden {
			t.Errorf("an approver's GET /sessions = %d, want 403", p.Status)
		}
	}
	// Revoke one of carol's sessions: carol is out, nobody else.
	var carolSession, alicePrincipal string
	list = erin.get("/sessions")
	list.Doc.Find(`[data-testid="sessions-table"] tbody tr`).Each(func(_ int, r *goquery.Selection) {
		who := strings.TrimSpace(r.Find(`[data-testid^="session-who-"]`).Text())
		id, _ := r.Attr("data-testid")
		href, _ := r.Find(`[data-testid^="session-who-"]`).Attr("href")
		switch who {
		case "Carol On-call":
			carolSession = strings.TrimPrefix(id, "session-")
		case "Alice Approver":
			alicePrincipal = strings.TrimPrefix(href, "/sessions?principal=")
		}
	})
	if carolSession == "" || alicePrincipal == "" {
		t.Fatalf("sessions list lacks carol's session or alice's link:\n%s", list.Body)
	}
	confirm := erin.get("/sessions/" + carolSession + "/revoke")
	if confirm.Doc.Find(`[data-testid="confirm"]`).Length() != 1 || carol.get("/").URL.Path != "/" {
		t.Fatalf("opening the confirmation changed something or showed none (%d)", confirm.Status)
	}
	before := auditCount(t, in.DB)
	done := erin.post("/sessions/"+carolSession+"/revoke", url.Values{"_csrf": {erin.csrf()}}, nil)
	if done.URL.Path != "/sessions" || done.Status != http.StatusOK {
		t.Fatalf("revoke ended at %s (%d)", done.URL, done.Status)
	}
	if p := carol.get("/status"); p.URL.Path != "/login" {
		t.Errorf("after revocation carol's GET /status ended at %s, want /login", p.URL)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "session.revoke" || ev.Subject.ID != carolSession || auditCount(t, in.DB) != before+1 {
		t.Errorf("audit = %s %s, want one session.revoke of %s", ev.Verb, ev.Subject.ID, carolSession)
	}
	// Revoking it again changes and records nothing.
	erin.post("/sessions/"+carolSession+"/revoke", url.Values{"_csrf": {erin.csrf()}}, nil)
	if auditCount(t, in.DB) != before+1 {
		t.Error("revoking an ended session was recorded again")
	}

	// Revoke all of alice's sessions: both browsers are out.
	if p := erin.get("/sessions/users/" + alicePrincipal + "/revoke"); p.Doc.Find(`[data-testid="confirm"]`).Length() != 1 {
		t.Fatalf("no confirmation for revoking all of alice's sessions (%d)", p.Status)
	}
	erin.post("/sessions/users/"+alicePrincipal+"/revoke", url.Values{"_csrf": {erin.csrf()}}, nil)
	for i, b := range []*browser{alice1, alice2} {
		if p := b.get("/approvals"); p.URL.Path != "/login" {
			t.Errorf("alice's browser %d after revoke-all: GET /approvals ended at %s, want /login", i+1, p.URL)
		}
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "session.revoke_all" || ev.Subject.ID != alicePrincipal {
		t.Errorf("audit = %s %s, want session.revoke_all of alice", ev.Verb, ev.Subject.ID)
	}
	if p := erin.get("/"); p.URL.Path != "/" {
		t.Errorf("the admin was signed out too: %s", p.URL)
	}
	// Bad input changes nothing.
	if p := erin.post("/sessions/nope/revoke", url.Values{"_csrf": {erin.csrf()}}, nil); p.Status != http.StatusNotFound {
		t.Errorf("revoking an unknown session = %d, want 404", p.Status)
	}
}

func TestHealthzWithASessionCookieNeedsNoDatabase(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	in.DB.Close()
	if p := b.get("/healthz"); p.Status != http.StatusOK {
		t.Errorf("healthz with a session cookie and the database closed = %d, want 200 (liveness checks no dependency)", p.Status)
	}
}

// Sign-out leaves through a page of Warden's (views.SignOut), not a
// redirect from the form's answer, so form-action stays 'self' even when
// the provider keeps its end-session endpoint on another host: no form of
// Warden's posts anywhere else.
func TestFormActionIsSelfOnly(t *testing.T) {
	idp := newTestProvider(t, "RS256")
	in := startWarden(t, idp.env())
	in.waitReady(t)
	in.Server.auth.mu.Lock()
	in.Server.auth.endSession = "https://logout.example.net/oauth2/logout"
	in.Server.auth.mu.Unlock()
	p := newBrowser(t, in.URL).get("/login")
	csp := p.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "form-action 'self';") {
		t.Errorf("CSP = %q, want form-action 'self' only", csp)
	}
}
