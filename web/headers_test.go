package web

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/config"
)

func TestSecurityHeaders(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	for _, path := range []string{"/login", "/", "/nope", "/dev-idp/.well-known/openid-configuration"} {
		p := b.get(path)
		csp := p.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows inline code: %q", path, csp)
		}
		if got := p.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options = %q", path, got)
		}
		if got := p.Header.Get("Referrer-Policy"); got == "" {
			t.Errorf("%s: no Referrer-Policy", path)
		}
		if got := p.Header.Get("Strict-Transport-Security"); got != "" {
			t.Errorf("%s: HSTS %q over plain http", path, got)
		}
	}
	// The flow cookie after a login attempt: HttpOnly, SameSite=Lax, not
	// Secure over http, and without the __Host- prefix browsers would
	// refuse there.
	resp, err := b.noRedirect().c.Get(in.URL + "/auth/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var found bool
	for _, c := range resp.Cookies() {
		if c.Name == flowCookieName {
			found = true
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure {
				t.Errorf("flow cookie HttpOnly=%v SameSite=%v Secure=%v, want true Lax false", c.HttpOnly, c.SameSite, c.Secure)
			}
		}
	}
	if !found {
		t.Error("starting a login set no session cookie")
	}
}

func TestHTTPSPublicURLMakesCookiesSecureAndSendsHSTS(t *testing.T) {
	srv := productionServer(t)
	if !srv.flows.Options.Secure {
		t.Error("flow cookie not Secure under an https public URL")
	}
	if srv.sessionCookie != "__Host-warden_session" || srv.flowCookie != "__Host-warden_flow" {
		t.Errorf("cookie names under https = %q, %q; want the __Host- prefix", srv.sessionCookie, srv.flowCookie)
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if got := rec.Header().Get("Strict-Transport-Security"); !strings.Contains(got, "max-age=") {
		t.Errorf("HSTS = %q under https, want max-age", got)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self';") {
		t.Errorf("CSP form-action = %q, want 'self' only (forms post to Warden alone)", csp)
	}
}

func TestErrorHandler(t *testing.T) {
	in := startWarden(t, nil)
	b := newBrowser(t, in.URL)

	p := b.get("/no/such/page")
	if p.Status != http.StatusNotFound || p.Doc.Find(`[data-testid="error-page"]`).Length() != 1 {
		t.Errorf("unknown page = %d without the error page", p.Status)
	}
	if p.Doc.Find(`link[href="/static/app.css"]`).Length() != 1 {
		t.Error("error page is not styled")
	}

	// A handler failure: the user sees a 500 page with the request id and
	// no internal detail; the log has the detail and the same id.
	e := in.Server.echo
	req := httptest.NewRequest(http.MethodGet, "/boom", nil)
	rec := httptest.NewRecorder()
	c := e.NewContext(req, rec)
	c.Response().Header().Set(echo.HeaderXRequestID, "req-123")
	in.Server.handleError(errors.New("database exploded: secret detail"), c)
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
	body := rec.Body.String()
	if strings.Contains(body, "secret detail") {
		t.Error("500 page shows the internal error")
	}
	logs := in.Logs.String()
	if !strings.Contains(logs, "req-123") || !strings.Contains(logs, "database exploded") {
		t.Errorf("5xx not logged with its request id:\n%s", logs)
	}

	// A 404 is not logged as an error.
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "/no/such/page") {
			t.Errorf("a 404 was logged as an error: %s", line)
		}
	}

	// API clients get JSON errors: OpenAI's shape under /v1/ (an unknown
	// path there is most likely an OpenAI client's), Warden's own under
	// its API, with OpenAI's type too.
	req2, _ := http.NewRequest(http.MethodGet, in.URL+"/v1/nothing", nil)
	resp := b.do(req2)
	if resp.Status != http.StatusNotFound || !strings.Contains(resp.Body, `"code":"unknown_url"`) || !strings.Contains(resp.Body, `"type":"invalid_request_error"`) {
		t.Errorf("/v1 404 = %d %s, want OpenAI's JSON error", resp.Status, resp.Body)
	}
	req3, _ := http.NewRequest(http.MethodGet, in.URL+"/v1/actions/a1/nowhere", nil)
	if resp := b.do(req3); resp.Status != http.StatusNotFound || !strings.Contains(resp.Body, `"code":"not_found"`) || !strings.Contains(resp.Body, `"type":"invalid_request_error"`) {
		t.Errorf("/v1/actions 404 = %d %s, want the API's JSON error", resp.Status, resp.Body)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	in := startWarden(t, nil)
	b := newBrowser(t, in.URL)
	if p := b.get("/healthz"); p.Status != http.StatusOK {
		t.Errorf("healthz = %d", p.Status)
	}
	if p := b.get("/readyz"); p.Status != http.StatusOK || !strings.Contains(p.Body, "ready") {
		t.Errorf("readyz = %d %s", p.Status, p.Body)
	}
	// The database goes away: readiness says so, liveness does not care.
	in.DB.Close()
	if p := b.get("/readyz"); p.Status != http.StatusServiceUnavailable {
		t.Errorf("readyz with the database closed = %d, want 503", p.Status)
	}
	if p := b.get("/healthz"); p.Status != http.StatusOK {
		t.Errorf("healthz with the database closed = %d, want 200", p.Status)
	}
}

// productionServer is a server in production mode (an https public URL,
// a real identity provider's settings) that is never started: its
// Handler answers requests in-process.
func productionServer(t *testing.T) *Server {
	t.Helper()
	vals := testEnv(t, map[string]string{
		"WARDEN_ADDR":               "127.0.0.1:0",
		"WARDEN_PUBLIC_URL":         "https://warden.example.com",
		"WARDEN_OIDC_ISSUER":        "https://idp.example.com",
		"WARDEN_OIDC_CLIENT_ID":     "warden",
		"WARDEN_OIDC_CLIENT_SECRET": "x",
	})
	cfg, err := config.Load(nil, func(k string) (string, bool) { v, ok := vals[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	db := openStore(t, cfg)
	t.Cleanup(func() { db.Close() })
	srv, err := New(Options{Config: cfg, DB: db, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
