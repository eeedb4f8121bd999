package web

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testProvider is a small OpenID provider written for these tests: it
// speaks the real protocol (discovery, authorization code with PKCE S256,
// client authentication at the token endpoint, signed ID tokens, JWKS,
// end-session) and lets a test choose what real providers differ in: the
// signing algorithm, the client authentication it accepts and advertises,
// a refused scope, the issuer it announces, an end-session endpoint. The
// browser never sees a login form: /authorize signs in the configured
// user at once.
type testProvider struct {
	t   testing.TB
	srv *httptest.Server

	clientID  string
	secret    string
	announced string // the issuer in discovery and tokens; default the server's URL

	mu            sync.Mutex
	alg           jose.SignatureAlgorithm
	key           crypto.Signer
	kid           string
	listAlgs      []string      // id_token_signing_alg_values_supported; nil lists alg
	discoveries   int           // discovery requests answered
	discoveryGate chan struct{} // when set, discovery answers once it is closed
	tokenCalls    int           // token endpoint requests
	authMethods   []string      // token_endpoint_auth_methods_supported; nil leaves it out
	accepts       string        // "basic", "post" or "" (either): what the token endpoint accepts
	refuseScope   string        // /authorize answers invalid_scope when this scope is asked for
	endSession    bool          // advertise end_session_endpoint
	sub, name     string
	groups        []string
	codes         map[string]tpGrant
	issued        []string     // ID tokens issued, in order
	endCalls      []url.Values // end-session requests
	// sessions, when set, gives the provider sessions of its own and a
	// logout page on another origin (idpSessions).
	sessions *idpSessions
}

type tpGrant struct {
	nonce, challenge, redirect string
}

func newTestProvider(t testing.TB, alg jose.SignatureAlgorithm) *testProvider {
	t.Helper()
	p := &testProvider{t: t, alg: alg, clientID: "warden-test", secret: "s3cret", codes: map[string]tpGrant{},
		sub: "u-1", name: "Tess Provider", groups: []string{"warden-admin", "warden-tenant-*"}, endSession: true,
		authMethods: []string{"client_secret_basic", "client_secret_post"}}
	p.rotate(alg)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /end_session", p.endSessionHandler)
	mux.HandleFunc("GET /authorize/as", p.authorizeAs)
	mux.HandleFunc("GET /end_session/done", p.endSessionDone)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// rotate replaces the signing key by a fresh one of alg, under a new key
// id, as a provider that rotates its keys to another algorithm does;
// discovery then lists alg.
func (p *testProvider) rotate(alg jose.SignatureAlgorithm) {
	var key crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		p.t.Fatalf("testProvider: algorithm %s not set up", alg)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.set(func(p *testProvider) { p.alg, p.key, p.kid = alg, key, randomToken()[:8] })
}

func (p *testProvider) issuer() string {
	if p.announced != "" {
		return p.announced
	}
	return p.srv.URL
}

// env is Warden's configuration for this provider.
func (p *testProvider) env() map[string]string {
	return map[string]string{
		"WARDEN_OIDC_ISSUER":        p.srv.URL,
		"WARDEN_OIDC_CLIENT_ID":     p.clientID,
		"WARDEN_OIDC_CLIENT_SECRET": p.secret,
	}
}

func (p *testProvider) set(f func(*testProvider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *testProvider) discovery(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	gate := p.discoveryGate
	p.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.discoveries++
	d := map[string]any{
		"issuer":                                p.issuer(),
		"authorization_endpoint":                p.srv.URL + "/authorize",
		"token_endpoint":                        p.srv.URL + "/token",
		"jwks_uri":                              p.srv.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": p.signingAlgs(),
		"code_challenge_methods_supported":      []string{"S256"},
	}
	if p.authMethods != nil {
		d["token_endpoint_auth_methods_supported"] = p.authMethods
	}
	if p.endSession {
		d["end_session_endpoint"] = p.srv.URL + "/end_session"
	}
	_ = json.NewEncoder(w).Encode(d)
}

func (p *testProvider) signingAlgs() []string {
	if p.listAlgs != nil {
		return p.listAlgs
	}
	return []string{string(p.alg)}
}

// counts is the number of discovery and token endpoint requests so far.
func (p *testProvider) counts() (discoveries, tokenCalls int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.discoveries, p.tokenCalls
}

func (p *testProvider) authorize(w http.ResponseWriter, r *http.Request) {
	if s := p.sess(); s != nil && !s.signedIn(w, r) {
		return
	}
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	back := url.Values{"state": {q.Get("state")}}
	p.mu.Lock()
	if p.refuseScope != "" && slices.Contains(strings.Fields(q.Get("scope")), p.refuseScope) {
		back.Set("error", "invalid_scope")
		back.Set("error_description", "scope "+p.refuseScope+" is not allowed for this client")
	} else {
		code := randomToken()
		p.codes[code] = tpGrant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: redirect.String()}
		back.Set("code", code)
	}
	p.mu.Unlock()
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (p *testProvider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokenCalls++
	fail := func(code string, status int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if (p.accepts == "basic" && !basic) || (p.accepts == "post" && basic) || id != p.clientID || secret != p.secret {
		fail("invalid_client", http.StatusUnauthorized)
		return
	}
	g, ok := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if !ok || r.PostForm.Get("grant_type") != "authorization_code" || r.PostForm.Get("redirect_uri") != g.redirect ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		fail("invalid_grant", http.StatusBadRequest)
		return
	}
	now := time.Now()
	claims := map[string]any{
		"iss": p.issuer(), "sub": p.sub, "aud": p.clientID, "azp": p.clientID,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "nonce": g.nonce,
		"name": p.name, "groups": p.groups,
	}
	idToken := p.sign(claims)
	p.issued = append(p.issued, idToken)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": randomToken(), "token_type": "Bearer", "expires_in": 3600, "id_token": idToken})
}

func (p *testProvider) sign(claims map[string]any) string {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: p.alg, Key: jose.JSONWebKey{Key: p.key, KeyID: p.kid, Algorithm: string(p.alg)}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		p.t.Errorf("signer: %v", err)
		return ""
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		p.t.Errorf("sign: %v", err)
		return ""
	}
	out, _ := jws.CompactSerialize()
	return out
}

func (p *testProvider) jwks(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: p.key.Public(), KeyID: p.kid, Algorithm: string(p.alg), Use: "sig"}}})
}

func (p *testProvider) endSessionHandler(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.endCalls = append(p.endCalls, r.URL.Query())
	p.mu.Unlock()
	if s := p.sess(); s != nil && s.toLogoutPage(w, r) {
		return
	}
	back := r.URL.Query().Get("post_logout_redirect_uri")
	if back == "" {
		_, _ = w.Write([]byte("signed out at the provider"))
		return
	}
	http.Redirect(w, r, back, http.StatusFound)
}

func (p *testProvider) lastIssued() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.issued) == 0 {
		return ""
	}
	return p.issued[len(p.issued)-1]
}

func (p *testProvider) endSessionCalls() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.endCalls)
}

// signIn goes through the whole flow in b and returns the page it ends on.
func (b *browser) signIn() page {
	b.t.Helper()
	return b.get("/auth/login")
}

// startLogin begins a sign-in in b without following the provider, and
// returns the provider's authorization URL (as a tab that is still on the
// provider's page would hold it).
func (b *browser) startLogin() *url.URL {
	b.t.Helper()
	resp, err := b.noRedirect().c.Get(b.base + "/auth/login")
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		b.t.Fatalf("GET /auth/login = %d without a redirect to the provider", resp.StatusCode)
	}
	return loc
}

// sessionCookieValue is b's session cookie for Warden, "" without one.
func (b *browser) sessionCookieValue() string {
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == sessionCookieName {
			return c.Value
		}
	}
	return ""
}
