package web

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/wardenhq/warden/principals"
)

// testUser is a mockoidc user whose ID token claims a test can bend.
type testUser struct {
	sub, name, email string
	groups           []string // nil: no groups claim at all
	mutate           func(jwt.MapClaims)
}

func (u testUser) ID() string { return u.sub }

func (u testUser) Userinfo([]string) ([]byte, error) {
	return json.Marshal(map[string]any{"sub": u.sub, "email": u.email})
}

func (u testUser) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	raw, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	c := jwt.MapClaims{}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	c["name"], c["email"] = u.name, u.email
	if u.groups != nil {
		c["groups"] = u.groups
	}
	if u.mutate != nil {
		u.mutate(c)
	}
	return c, nil
}

// startIdP runs mockoidc, an OIDC provider independent of Warden's own.
func startIdP(t *testing.T) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return m
}

func productionEnv(m *mockoidc.MockOIDC) map[string]string {
	return map[string]string{
		"WARDEN_OIDC_ISSUER":        m.Issuer(),
		"WARDEN_OIDC_CLIENT_ID":     m.ClientID,
		"WARDEN_OIDC_CLIENT_SECRET": m.ClientSecret,
	}
}

func TestLoginWithIndependentProvider(t *testing.T) {
	m := startIdP(t)
	in := startWarden(t, productionEnv(m))
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	m.QueueUser(testUser{sub: "u-42", name: "Olivia Ops", email: "olivia@example.com", groups: []string{"warden-oncall", "warden-admin", "warden-tenant-acme", "unrelated"}})

	home := b.get("/auth/login")
	if home.URL.Path != "/" || home.Status != http.StatusOK {
		t.Fatalf("login ended at %s (%d):\n%s", home.URL, home.Status, home.Body)
	}
	if got := text(home, "whoami-roles"); got != "admin oncall" && !(strings.Contains(got, "admin") && strings.Contains(got, "oncall")) {
		t.Errorf("roles = %q, want admin and oncall", got)
	}
	if got := text(home, "whoami-tenants"); got != "acme" {
		t.Errorf("tenants = %q, want acme", got)
	}
	if home.Doc.Find(`[data-testid="dev-banner"]`).Length() != 0 {
		t.Error("production mode shows the development banner")
	}
	ev := lastAudit(t, in.DB)
	p, err := principals.ByID(t.Context(), in.DB, ev.Actor.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Issuer != m.Issuer() || p.Subject != "u-42" {
		t.Errorf("stored principal %s/%s, want %s/u-42", p.Issuer, p.Subject, m.Issuer())
	}
	if b.get("/status").Status != http.StatusOK {
		t.Error("on-call cannot open /status")
	}
}

func TestRefusedLoginsAreAudited(t *testing.T) {
	m := startIdP(t)
	in := startWarden(t, productionEnv(m))
	in.waitReady(t)
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	good := []string{"warden-admin", "warden-tenant-*"}
	tests := []struct {
		name   string
		user   testUser
		before func() (after func())
		tamper func(*http.Request) // applied to the callback request
		reason string
	}{
		{name: "wrong nonce", user: testUser{sub: "s2", groups: good, mutate: func(c jwt.MapClaims) { c["nonce"] = "replayed-nonce" }},
			reason: "nonce_mismatch"},
		{name: "expired token", user: testUser{sub: "s3", groups: good, mutate: func(c jwt.MapClaims) {
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
		}}, reason: "token_expired"},
		{name: "wrong audience", user: testUser{sub: "s4", groups: good, mutate: func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} }},
			reason: "wrong_audience"},
		{name: "wrong issuer", user: testUser{sub: "s5", groups: good, mutate: func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" }},
			reason: "wrong_issuer"},
		{name: "signed by another key", user: testUser{sub: "s6", groups: good},
			before: func() func() {
				orig := m.Keypair.PrivateKey
				m.Keypair.PrivateKey = otherKey // same kid, other key
				return func() { m.Keypair.PrivateKey = orig }
			}, reason: "bad_signature"},
		{name: "provider error", user: testUser{sub: "s7", groups: good},
			tamper: func(r *http.Request) {
				r.URL.RawQuery = "error=access_denied&error_description=" + url.QueryEscape("<b>Not you</b>") + "&state=" + r.URL.Query().Get("state")
			},
			reason: "provider_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				defer tt.before()()
			}
			m.QueueUser(tt.user)
			b := newBrowser(t, in.URL)
			b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
				if req.URL.Path == "/auth/callback" && tt.tamper != nil {
					tt.tamper(req)
				}
				return nil
			}
			before := auditCount(t, in.DB)
			p := b.get("/auth/login")
			if p.Status != http.StatusUnauthorized || text(p, "login-error") == "" {
				t.Fatalf("login = %d at %s, want 401 with an error message:\n%s", p.Status, p.URL, p.Body)
			}
			if got := auditCount(t, in.DB); got != before+1 {
				t.Fatalf("audit count %d, want %d", got, before+1)
			}
			ev := lastAudit(t, in.DB)
			if ev.Verb != "auth.login_failed" || ev.Subject.ID != tt.reason || ev.Details["reason"] != tt.reason {
				t.Errorf("audit = %s %s %v, want auth.login_failed with reason %s", ev.Verb, ev.Subject.ID, ev.Details, tt.reason)
			}
			if tt.reason == "provider_error" {
				// The provider's error_description is shown, escaped.
				if got := text(p, "login-error"); !strings.Contains(got, "access_denied") || !strings.Contains(got, "<b>Not you</b>") || strings.Contains(p.Body, "<b>Not you</b>") {
					t.Errorf("login error = %q, want the code and the description as text", got)
				}
			}
			if home := b.get("/"); home.URL.Path != "/login" {
				t.Errorf("after a refused login GET / ended at %s, want /login", home.URL)
			}
		})
	}
}

func TestMissingGroupsClaimMeansNoRoles(t *testing.T) {
	m := startIdP(t)
	in := startWarden(t, productionEnv(m))
	in.waitReady(t)
	m.QueueUser(testUser{sub: "nogroups", name: "Nora", email: "nora@example.com"})
	b := newBrowser(t, in.URL)
	home := b.get("/auth/login")
	if home.URL.Path != "/" {
		t.Fatalf("login ended at %s (%d)", home.URL, home.Status)
	}
	if got := text(home, "whoami-roles"); got != "none" {
		t.Errorf("roles = %q, want none", got)
	}
	for _, path := range []string{"/status", "/audit", "/tenants"} {
		if p := b.get(path); p.Status != http.StatusForbidden {
			t.Errorf("GET %s = %d, want 403", path, p.Status)
		}
	}
}

func TestHTMLInjectionInClaimsIsEscaped(t *testing.T) {
	m := startIdP(t)
	in := startWarden(t, productionEnv(m))
	in.waitReady(t)
	evil := `<script>alert("x")</script><img src=x onerror=alert(1)>`
	m.QueueUser(testUser{sub: evil, name: evil, email: `"><b>e@example.com`, groups: []string{"warden-admin", "warden-tenant-*", evil}})
	b := newBrowser(t, in.URL)
	home := b.get("/auth/login")
	if home.URL.Path != "/" {
		t.Fatalf("login ended at %s (%d)", home.URL, home.Status)
	}
	for _, path := range []string{"/", "/audit"} {
		p := b.get(path)
		if strings.Contains(p.Body, "<script>alert") || strings.Contains(p.Body, "<img src=x") || strings.Contains(p.Body, `"><b>`) {
			t.Errorf("%s returns user-controlled HTML unescaped", path)
		}
		if p.Doc.Find(`script:not([src="/static/menu.js"])`).Length() != 0 {
			t.Errorf("%s contains a script element", path)
		}
	}
	if got := text(home, "whoami-name"); got != evil {
		t.Errorf("name shown as %q, want the literal text %q", got, evil)
	}
}

func TestProviderUnreachableAtStartup(t *testing.T) {
	// Reserve a port for the provider, then start Warden while nothing
	// answers there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"WARDEN_OIDC_ISSUER":        "http://" + addr + "/oidc",
		"WARDEN_OIDC_CLIENT_ID":     m.ClientID,
		"WARDEN_OIDC_CLIENT_SECRET": m.ClientSecret,
	}
	in := startWarden(t, env)
	b := newBrowser(t, in.URL)

	login := b.get("/login")
	if login.Status != http.StatusOK || login.Doc.Find(`[data-testid="idp-unreachable"]`).Length() != 1 {
		t.Fatalf("login page while the provider is down (%d) does not say it is unreachable:\n%s", login.Status, login.Body)
	}
	if p := b.get("/auth/login"); p.URL.Path != "/login" {
		t.Errorf("starting a login while the provider is down ended at %s, want /login", p.URL)
	}
	if r := b.get("/readyz"); r.Status != http.StatusOK {
		t.Errorf("readyz = %d while only the provider is down, want 200", r.Status)
	}

	// The provider comes up; Warden's background discovery finds it.
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s was taken in the meantime: %v", addr, err)
	}
	if err := m.Start(ln2, nil); err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	in.waitReady(t)
	m.QueueUser(testUser{sub: "late", name: "Late Larry", groups: []string{"warden-auditor", "warden-tenant-*"}})
	if home := b.get("/auth/login"); text(home, "whoami-name") != "Late Larry" {
		t.Fatalf("login after the provider came up ended at %s (%d)", home.URL, home.Status)
	}

	// The provider goes away again: signed-in users keep working.
	m.Shutdown()
	if p := b.get("/audit"); p.Status != http.StatusOK {
		t.Errorf("GET /audit with the provider down = %d, want 200 for an existing session", p.Status)
	}
}
