package devidp

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"
)

const (
	testClientID     = "warden-console"
	testClientSecret = "dev-client-secret"
)

// testEnv is a provider mounted at /dev-idp on a real HTTP server, with a
// go-oidc client discovered from it, as Warden's console would build it.
type testEnv struct {
	srv         *httptest.Server
	p           *Provider
	clock       *fakeClock
	issuer      string
	redirectURI string
	logoutURI   string
	provider    *oidc.Provider
	browser     *http.Client // does not follow redirects, so each hop is checked
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newEnv serves the provider the way a plain net/http server would mount it.
func newEnv(t *testing.T, users []User) *testEnv {
	t.Helper()
	return newEnvMounted(t, users, func(h http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/dev-idp/", h)
		return mux
	})
}

// newEnvMounted serves the root handler that mount builds around the
// provider's Handler.
func newEnvMounted(t *testing.T, users []User, mount func(http.Handler) http.Handler) *testEnv {
	t.Helper()
	// Unstarted, so the issuer URL is known before the handler is built.
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	t.Cleanup(srv.Close)

	e := &testEnv{
		srv:         srv,
		clock:       &fakeClock{now: time.Now()},
		issuer:      base + "/dev-idp",
		redirectURI: base + "/auth/callback",
		logoutURI:   base + "/signed-out",
		browser: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
	}
	p, err := New(Config{
		Issuer:                 e.issuer,
		ClientID:               testClientID,
		ClientSecret:           testClientSecret,
		RedirectURIs:           []string{e.redirectURI},
		PostLogoutRedirectURIs: []string{e.logoutURI},
		Users:                  users,
		CryptoKey:              randomKey(t),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	p.store.now = e.clock.Now
	e.p = p
	srv.Config.Handler = mount(p.Handler())
	srv.Start()

	e.provider, err = oidc.NewProvider(t.Context(), e.issuer)
	if err != nil {
		t.Fatalf("oidc.NewProvider(%q): %v", e.issuer, err)
	}
	return e
}

func randomKey(t *testing.T) [32]byte {
	t.Helper()
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	return k
}

func (e *testEnv) oauthConfig(style oauth2.AuthStyle, secret string) *oauth2.Config {
	ep := e.provider.Endpoint()
	ep.AuthStyle = style
	return &oauth2.Config{
		ClientID:     testClientID,
		ClientSecret: secret,
		Endpoint:     ep,
		RedirectURL:  e.redirectURI,
		Scopes:       []string{oidc.ScopeOpenID, "profile", "email", "groups"},
	}
}

// do sends a request with the non-following browser and returns the
// response with its body read.
func (e *testEnv) do(t *testing.T, method, target string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := e.browser.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func location(t *testing.T, resp *http.Response, wantStatus int) *url.URL {
	t.Helper()
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d, want %d", resp.Request.Method, resp.Request.URL, resp.StatusCode, wantStatus)
	}
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("%s %s: Location: %v", resp.Request.Method, resp.Request.URL, err)
	}
	return loc
}

// flow is one login in progress, as the console's session would hold it.
type flow struct {
	state, nonce, verifier string
	pickerURL              *url.URL
	authRequestID          string
}

func newFlow() flow {
	return flow{state: rand.Text(), nonce: rand.Text(), verifier: oauth2.GenerateVerifier()}
}

// authorize sends the browser to the authorization endpoint and follows it
// to the picker page.
func (e *testEnv) authorize(t *testing.T, conf *oauth2.Config) flow {
	t.Helper()
	f := newFlow()
	authURL := conf.AuthCodeURL(f.state, oidc.Nonce(f.nonce), oauth2.S256ChallengeOption(f.verifier))
	resp, _ := e.do(t, http.MethodGet, authURL, nil)
	f.pickerURL = location(t, resp, http.StatusFound)
	if f.pickerURL.Path != "/dev-idp/login" {
		t.Fatalf("authorize redirected to %s, want the picker at /dev-idp/login", f.pickerURL)
	}
	f.authRequestID = f.pickerURL.Query().Get("authRequestID")
	return f
}

// choose posts the user choice and follows the callback to the client's
// redirect URI, returning the code.
func (e *testEnv) choose(t *testing.T, f flow, username string) string {
	t.Helper()
	resp, _ := e.do(t, http.MethodPost, e.issuer+"/login", url.Values{
		"authRequestID": {f.authRequestID},
		"username":      {username},
	})
	callback := location(t, resp, http.StatusSeeOther)
	if got, want := callback.String(), e.issuer+"/authorize/callback?id="+url.QueryEscape(f.authRequestID); got != want {
		t.Fatalf("picker redirected to %s, want %s", got, want)
	}
	resp, _ = e.do(t, http.MethodGet, callback.String(), nil)
	back := location(t, resp, http.StatusFound)
	if got := back.Scheme + "://" + back.Host + back.Path; got != e.redirectURI {
		t.Fatalf("callback redirected to %s, want the client's %s", back, e.redirectURI)
	}
	if got := back.Query().Get("state"); got != f.state {
		t.Fatalf("state = %q, want %q", got, f.state)
	}
	code := back.Query().Get("code")
	if code == "" {
		t.Fatalf("redirect %s has no code (error %q)", back, back.Query().Get("error"))
	}
	return code
}

// login runs the browser side of a login as username and returns the code.
func (e *testEnv) login(t *testing.T, conf *oauth2.Config, username string) (flow, string) {
	t.Helper()
	f := e.authorize(t, conf)
	resp, body := e.do(t, http.MethodGet, f.pickerURL.String(), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("picker: status %d, want 200", resp.StatusCode)
	}
	if !strings.Contains(body, `data-testid="devidp-user-`+username+`"`) {
		t.Fatalf("picker does not offer %q", username)
	}
	return f, e.choose(t, f, username)
}

type idClaims struct {
	Email             string   `json:"email"`
	EmailVerified     bool     `json:"email_verified"`
	Name              string   `json:"name"`
	PreferredUsername string   `json:"preferred_username"`
	Groups            []string `json:"groups"`
}

func TestLogin(t *testing.T) {
	e := newEnv(t, DemoUsers())
	verifier := e.provider.Verifier(&oidc.Config{ClientID: testClientID})

	type tc struct {
		name  string
		user  User
		style oauth2.AuthStyle
	}
	var cases []tc
	for _, u := range DemoUsers() {
		cases = append(cases, tc{name: u.Username + "/client_secret_basic", user: u, style: oauth2.AuthStyleInHeader})
	}
	cases = append(cases, tc{name: "alice/client_secret_post", user: DemoUsers()[0], style: oauth2.AuthStyleInParams})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conf := e.oauthConfig(c.style, testClientSecret)
			f, code := e.login(t, conf, c.user.Username)

			tok, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
			if err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			raw, ok := tok.Extra("id_token").(string)
			if !ok {
				t.Fatal("token response has no id_token")
			}
			idt, err := verifier.Verify(t.Context(), raw)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
				t.Errorf("VerifyAccessToken (at_hash): %v", err)
			}
			if idt.Nonce != f.nonce {
				t.Errorf("nonce = %q, want %q", idt.Nonce, f.nonce)
			}
			if idt.Issuer != e.issuer {
				t.Errorf("iss = %q, want %q", idt.Issuer, e.issuer)
			}
			if idt.Subject != c.user.Subject {
				t.Errorf("sub = %q, want %q", idt.Subject, c.user.Subject)
			}
			var got idClaims
			if err := idt.Claims(&got); err != nil {
				t.Fatalf("Claims: %v", err)
			}
			want := idClaims{
				Email:             c.user.Email,
				EmailVerified:     true,
				Name:              c.user.Name,
				PreferredUsername: c.user.Username,
				Groups:            c.user.Groups,
			}
			if !equalClaims(got, want) {
				t.Errorf("ID token claims = %+v, want %+v", got, want)
			}
			var rawGroups map[string]json.RawMessage
			if err := idt.Claims(&rawGroups); err != nil {
				t.Fatal(err)
			}
			if _, ok := rawGroups["groups"]; !ok {
				t.Error("ID token has no groups claim")
			}

			info, err := e.provider.UserInfo(t.Context(), oauth2.StaticTokenSource(tok))
			if err != nil {
				t.Fatalf("UserInfo: %v", err)
			}
			var gotInfo idClaims
			if err := info.Claims(&gotInfo); err != nil {
				t.Fatal(err)
			}
			if info.Subject != c.user.Subject || !equalClaims(gotInfo, want) {
				t.Errorf("userinfo = %s %+v, want %s %+v", info.Subject, gotInfo, c.user.Subject, want)
			}
		})
	}
}

func equalClaims(a, b idClaims) bool {
	return a.Email == b.Email && a.EmailVerified == b.EmailVerified && a.Name == b.Name &&
		a.PreferredUsername == b.PreferredUsername && slices.Equal(a.Groups, b.Groups)
}

// wantTokenError checks that err is the token endpoint refusing with code.
func wantTokenError(t *testing.T, err error, wantStatus int, wantCode string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("Exchange error = %v, want a token endpoint error %s", err, wantCode)
	}
	if re.Response.StatusCode != wantStatus || re.ErrorCode != wantCode {
		t.Fatalf("token endpoint answered %d %q, want %d %q", re.Response.StatusCode, re.ErrorCode, wantStatus, wantCode)
	}
}

// TestEchoMount logs in through the provider mounted the way Warden does:
// a catch-all Echo route and echo.WrapHandler, with the issuer path still
// on the request.
func TestEchoMount(t *testing.T) {
	e := newEnvMounted(t, DemoUsers(), func(h http.Handler) http.Handler {
		ec := echo.New()
		ec.Any("/dev-idp/*", echo.WrapHandler(h))
		return ec
	})
	conf := e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret)
	f, code := e.login(t, conf, "erin")
	tok, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := e.provider.Verifier(&oidc.Config{ClientID: testClientID}).Verify(t.Context(), raw)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if idt.Subject != "dev-erin" || idt.Nonce != f.nonce {
		t.Errorf("sub, nonce = %q, %q; want dev-erin, %q", idt.Subject, idt.Nonce, f.nonce)
	}
}

func TestTokenRefusals(t *testing.T) {
	e := newEnv(t, DemoUsers())
	conf := e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret)

	t.Run("reused code", func(t *testing.T) {
		f, code := e.login(t, conf, "alice")
		if _, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier)); err != nil {
			t.Fatalf("first Exchange: %v", err)
		}
		_, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
		wantTokenError(t, err, http.StatusBadRequest, "invalid_grant")
	})

	t.Run("code raced by two exchanges", func(t *testing.T) {
		f, code := e.login(t, conf, "alice")
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
			})
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("exchange errors = %v, %v; want exactly one success", errs[0], errs[1])
		}
	})

	t.Run("wrong PKCE verifier", func(t *testing.T) {
		f, code := e.login(t, conf, "alice")
		_, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
		wantTokenError(t, err, http.StatusBadRequest, "invalid_grant")
		// The failed attempt consumed the code.
		_, err = conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
		wantTokenError(t, err, http.StatusBadRequest, "invalid_grant")
	})

	t.Run("missing PKCE verifier", func(t *testing.T) {
		_, code := e.login(t, conf, "alice")
		_, err := conf.Exchange(t.Context(), code)
		wantTokenError(t, err, http.StatusBadRequest, "invalid_request")
	})

	for _, style := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"basic", oauth2.AuthStyleInHeader}, {"post", oauth2.AuthStyleInParams}} {
		t.Run("wrong client secret/"+style.name, func(t *testing.T) {
			f, code := e.login(t, conf, "alice")
			bad := e.oauthConfig(style.style, "not-the-secret")
			_, err := bad.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
			wantTokenError(t, err, http.StatusUnauthorized, "invalid_client")
		})
	}

	t.Run("expired code", func(t *testing.T) {
		f, code := e.login(t, conf, "alice")
		e.clock.Advance(codeTTL + time.Second)
		_, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
		wantTokenError(t, err, http.StatusBadRequest, "invalid_grant")
	})
}

func TestAuthorizeRefusals(t *testing.T) {
	e := newEnv(t, DemoUsers())
	verifier := oauth2.GenerateVerifier()
	base := url.Values{
		"client_id":             {testClientID},
		"redirect_uri":          {e.redirectURI},
		"response_type":         {"code"},
		"scope":                 {"openid profile email"},
		"state":                 {"st"},
		"nonce":                 {"n0"},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"},
	}
	tests := []struct {
		name      string
		change    func(url.Values)
		wantError string // error= on the redirect back to the client; "" for a 400 without redirect
	}{
		{"no PKCE", func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") }, "invalid_request"},
		{"plain PKCE", func(v url.Values) { v.Set("code_challenge", verifier); v.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"no nonce", func(v url.Values) { v.Del("nonce") }, "invalid_request"},
		{"form_post response mode", func(v url.Values) { v.Set("response_mode", "form_post") }, "invalid_request"},
		{"prompt none", func(v url.Values) { v.Set("prompt", "none") }, "login_required"},
		{"implicit flow", func(v url.Values) { v.Set("response_type", "id_token") }, ""},
		{"unregistered redirect URI", func(v url.Values) { v.Set("redirect_uri", e.srv.URL+"/elsewhere") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := url.Values{}
			for k, vs := range base {
				v[k] = slices.Clone(vs)
			}
			tt.change(v)
			resp, _ := e.do(t, http.MethodGet, e.issuer+"/authorize?"+v.Encode(), nil)
			if tt.wantError == "" {
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
					t.Errorf("status %d Location %q, want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
				}
				return
			}
			back := location(t, resp, http.StatusFound)
			if got := back.Scheme + "://" + back.Host + back.Path; got != e.redirectURI {
				t.Fatalf("redirected to %s, want the client's %s", back, e.redirectURI)
			}
			if got := back.Query().Get("error"); got != tt.wantError {
				t.Errorf("error = %q, want %q", got, tt.wantError)
			}
			if got := back.Query().Get("state"); got != "st" {
				t.Errorf("state = %q, want %q", got, "st")
			}
		})
	}

}

func TestPickerRefusesUnknownOrFinishedRequests(t *testing.T) {
	e := newEnv(t, DemoUsers())
	conf := e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret)

	finished := e.authorize(t, conf)
	e.choose(t, finished, "alice")
	expired := e.authorize(t, conf)
	e.clock.Advance(authRequestTTL + time.Second)
	pending := e.authorize(t, conf)

	tests := []struct {
		name       string
		method     string
		id         string
		username   string
		wantStatus int
	}{
		{"GET unknown id", http.MethodGet, "no-such-request", "", http.StatusBadRequest},
		{"GET missing id", http.MethodGet, "", "", http.StatusBadRequest},
		{"GET finished", http.MethodGet, finished.authRequestID, "", http.StatusBadRequest},
		{"GET expired", http.MethodGet, expired.authRequestID, "", http.StatusBadRequest},
		{"GET pending", http.MethodGet, pending.authRequestID, "", http.StatusOK},
		{"POST unknown id", http.MethodPost, "no-such-request", "alice", http.StatusBadRequest},
		{"POST finished", http.MethodPost, finished.authRequestID, "bob", http.StatusBadRequest},
		{"POST expired", http.MethodPost, expired.authRequestID, "alice", http.StatusBadRequest},
		{"POST unknown user", http.MethodPost, pending.authRequestID, "zed", http.StatusBadRequest},
		{"PUT", http.MethodPut, pending.authRequestID, "alice", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := e.issuer + "/login"
			var form url.Values
			if tt.method == http.MethodGet {
				target += "?" + url.Values{"authRequestID": {tt.id}}.Encode()
			} else {
				form = url.Values{"authRequestID": {tt.id}, "username": {tt.username}}
			}
			resp, body := e.do(t, tt.method, target, form)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if resp.StatusCode == http.StatusBadRequest && !strings.Contains(body, "devidp-message") {
				t.Errorf("400 body is not the message page: %s", body)
			}
		})
	}

	// The refusals above changed nothing: the pending request still completes.
	e.choose(t, pending, "bob")
}

func parsePicker(t *testing.T, e *testEnv) (*goquery.Document, *http.Response, string, flow) {
	t.Helper()
	f := e.authorize(t, e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret))
	resp, body := e.do(t, http.MethodGet, f.pickerURL.String(), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("picker: status %d, want 200", resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc, resp, body, f
}

func TestPickerPage(t *testing.T) {
	e := newEnv(t, DemoUsers())
	doc, resp, _, f := parsePicker(t, e)

	if got := resp.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/html; charset=utf-8", got)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if got := doc.Find("h1").Text(); got != "Development identity provider — not for production" {
		t.Errorf("h1 = %q", got)
	}
	if got, _ := doc.Find(`link[rel="stylesheet"]`).Attr("href"); got != "/static/app.css" {
		t.Errorf("stylesheet href = %q, want /static/app.css", got)
	}
	// Strict CSP: no inline script or style of any kind.
	if n := doc.Find("script, style, [style]").Length(); n != 0 {
		t.Errorf("page has %d script/style elements or style attributes", n)
	}
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s> has inline event handler %s", goquery.NodeName(s), a.Key)
			}
		}
	})

	form := doc.Find("form.devidp-form")
	if m, _ := form.Attr("method"); m != "post" {
		t.Errorf("form method = %q, want post", m)
	}
	if a, _ := form.Attr("action"); a != "/dev-idp/login" {
		t.Errorf("form action = %q, want /dev-idp/login", a)
	}
	if id, _ := form.Find(`input[type="hidden"][name="authRequestID"]`).Attr("value"); id != f.authRequestID {
		t.Errorf("hidden authRequestID = %q, want %q", id, f.authRequestID)
	}

	users := DemoUsers()
	if n := form.Find("button.devidp-user").Length(); n != len(users) {
		t.Errorf("%d user buttons, want %d", n, len(users))
	}
	for _, u := range users {
		b := form.Find(`[data-testid="devidp-user-` + u.Username + `"]`)
		if b.Length() != 1 || goquery.NodeName(b) != "button" {
			t.Errorf("%s: want exactly one button, got %d %q", u.Username, b.Length(), goquery.NodeName(b))
			continue
		}
		attr := func(name string) string { v, _ := b.Attr(name); return v }
		if attr("type") != "submit" || attr("name") != "username" || attr("value") != u.Username {
			t.Errorf("%s: button type=%q name=%q value=%q, want submit username %s",
				u.Username, attr("type"), attr("name"), attr("value"), u.Username)
		}
		for class, want := range map[string]string{
			".devidp-user-name":        u.Name,
			".devidp-user-username":    u.Username,
			".devidp-user-description": u.Description,
		} {
			if got := b.Find(class).Text(); got != want {
				t.Errorf("%s: %s = %q, want %q", u.Username, class, got, want)
			}
		}
		wantGroups := "no groups"
		if len(u.Groups) > 0 {
			wantGroups = "groups: " + strings.Join(u.Groups, ", ")
		}
		if got := b.Find(".devidp-user-groups").Text(); got != wantGroups {
			t.Errorf("%s: groups = %q, want %q", u.Username, got, wantGroups)
		}
	}
}

func TestHTMLInjection(t *testing.T) {
	const payload = `<script>alert("x")</script>`
	e := newEnv(t, []User{{
		Subject:     "dev-" + payload,
		Username:    payload,
		Name:        payload,
		Email:       "x@example.com",
		Groups:      []string{payload},
		Description: payload,
	}})
	doc, _, body, _ := parsePicker(t, e)

	if strings.Contains(body, payload) {
		t.Error("page contains the raw payload")
	}
	if n := doc.Find("script").Length(); n != 0 {
		t.Errorf("page has %d script elements, want 0", n)
	}
	b := doc.Find("button.devidp-user")
	for _, class := range []string{".devidp-user-name", ".devidp-user-username", ".devidp-user-description"} {
		if got := b.Find(class).Text(); got != payload {
			t.Errorf("%s text = %q, want the payload as text", class, got)
		}
	}
	if got := b.Find(".devidp-user-groups").Text(); got != "groups: "+payload {
		t.Errorf("groups text = %q, want the payload as text", got)
	}
	if got, _ := b.Attr("value"); got != payload {
		t.Errorf("button value = %q, want the payload", got)
	}
	if got, _ := b.Attr("data-testid"); got != "devidp-user-"+payload {
		t.Errorf("data-testid = %q, want devidp-user-<payload>", got)
	}
}

func TestEndSession(t *testing.T) {
	e := newEnv(t, DemoUsers())
	conf := e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret)

	f, code := e.login(t, conf, "carol")
	tok, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		t.Fatal(err)
	}
	idToken, _ := tok.Extra("id_token").(string)

	var endSession struct {
		URL string `json:"end_session_endpoint"`
	}
	if err := e.provider.Claims(&endSession); err != nil {
		t.Fatal(err)
	}
	if endSession.URL != e.issuer+"/end_session" {
		t.Fatalf("end_session_endpoint = %q, want %q", endSession.URL, e.issuer+"/end_session")
	}

	q := url.Values{"id_token_hint": {idToken}, "post_logout_redirect_uri": {e.logoutURI}, "state": {"bye"}}
	resp, _ := e.do(t, http.MethodGet, endSession.URL+"?"+q.Encode(), nil)
	if got, want := location(t, resp, http.StatusFound).String(), e.logoutURI+"?state=bye"; got != want {
		t.Errorf("end_session redirected to %s, want %s", got, want)
	}
	// Ending the session revoked the access token.
	if _, err := e.provider.UserInfo(t.Context(), oauth2.StaticTokenSource(tok)); err == nil {
		t.Error("UserInfo after end_session succeeded, want refusal")
	}

	q.Set("post_logout_redirect_uri", e.srv.URL+"/not-registered")
	resp, _ = e.do(t, http.MethodGet, endSession.URL+"?"+q.Encode(), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unregistered post_logout_redirect_uri: status %d, want 400", resp.StatusCode)
	}
}

func TestLoggedOutPage(t *testing.T) {
	e := newEnv(t, DemoUsers())
	resp, body := e.do(t, http.MethodGet, e.issuer+"/logged-out", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "You are signed out.") {
		t.Errorf("logged-out page: status %d body %s", resp.StatusCode, body)
	}
}

func TestHandlerMount(t *testing.T) {
	e := newEnv(t, DemoUsers())

	resp, body := e.do(t, http.MethodGet, e.issuer+"/.well-known/openid-configuration", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("discovery: status %d", resp.StatusCode)
	}
	var disc map[string]any
	if err := json.Unmarshal([]byte(body), &disc); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"issuer":                 e.issuer,
		"authorization_endpoint": e.issuer + "/authorize",
		"token_endpoint":         e.issuer + "/oauth/token",
		"userinfo_endpoint":      e.issuer + "/userinfo",
		"jwks_uri":               e.issuer + "/keys",
		"end_session_endpoint":   e.issuer + "/end_session",
	} {
		if got := disc[key]; got != want {
			t.Errorf("discovery %s = %v, want %s", key, got, want)
		}
	}
	resp, _ = e.do(t, http.MethodGet, e.issuer+"/keys", nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("jwks: status %d, want 200", resp.StatusCode)
	}

	// Paths outside the issuer path, called on the handler directly as a
	// catch-all mount would.
	for _, path := range []string{
		"/.well-known/openid-configuration",
		"/login",
		"/dev-idp",
		"/dev-idpx/.well-known/openid-configuration",
		"/other/dev-idp/login",
	} {
		rec := httptest.NewRecorder()
		e.p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, rec.Code)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	good := func() Config {
		return Config{
			Issuer:       "http://127.0.0.1:8080/dev-idp",
			ClientID:     "c",
			ClientSecret: "s",
			RedirectURIs: []string{"http://127.0.0.1:8080/auth/callback"},
			Users:        DemoUsers(),
			CryptoKey:    [32]byte{1},
		}
	}
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string // substring naming the setting
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }, "Issuer"},
		{"relative issuer", func(c *Config) { c.Issuer = "/dev-idp" }, "Issuer"},
		{"issuer with slash", func(c *Config) { c.Issuer += "/" }, "Issuer"},
		{"issuer with query", func(c *Config) { c.Issuer += "?a=b" }, "Issuer"},
		{"no client id", func(c *Config) { c.ClientID = "" }, "ClientID"},
		{"no client secret", func(c *Config) { c.ClientSecret = "" }, "ClientSecret"},
		{"no crypto key", func(c *Config) { c.CryptoKey = [32]byte{} }, "CryptoKey"},
		{"no redirect URIs", func(c *Config) { c.RedirectURIs = nil }, "RedirectURIs"},
		{"relative redirect URI", func(c *Config) { c.RedirectURIs = []string{"/auth/callback"} }, "RedirectURIs"},
		{"bad logout URI", func(c *Config) { c.PostLogoutRedirectURIs = []string{"x"} }, "PostLogoutRedirectURIs"},
		{"no users", func(c *Config) { c.Users = nil }, "Users"},
		{"user without subject", func(c *Config) { c.Users[1].Subject = "" }, "Users[1]"},
		{"user without username", func(c *Config) { c.Users[2].Username = "" }, "Users[2]"},
		{"repeated subject", func(c *Config) { c.Users[1].Subject = c.Users[0].Subject }, "Users[1]"},
		{"repeated username", func(c *Config) { c.Users[3].Username = c.Users[0].Username }, "Users[3]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good()
			tt.change(&cfg)
			_, _, err := validateConfig(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("validateConfig() = %v, want an error naming %s", err, tt.wantErr)
			}
		})
	}
	if _, _, err := validateConfig(good()); err != nil {
		t.Errorf("validateConfig(good) = %v, want nil", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New(Config{}) succeeded, want an error")
	}
}

func TestDemoUsers(t *testing.T) {
	want := []User{
		{"dev-alice", "alice", "Alice Approver", "alice@example.com", []string{"warden-approver", "warden-tenant-acme"}, ""},
		{"dev-bob", "bob", "Bob Approver", "bob@example.com", []string{"warden-approver", "warden-tenant-acme"}, ""},
		{"dev-carol", "carol", "Carol On-call", "carol@example.com", []string{"warden-oncall", "warden-tenant-*"}, ""},
		{"dev-dave", "dave", "Dave Auditor", "dave@example.com", []string{"warden-auditor", "warden-tenant-*"}, ""},
		{"dev-erin", "erin", "Erin Admin", "erin@example.com", []string{"warden-admin", "warden-tenant-*"}, ""},
		{"dev-frank", "frank", "Frank Admin", "frank@example.com", []string{"warden-admin", "warden-tenant-*", "payments"}, ""},
		{"dev-mallory", "mallory", "Mallory Nobody", "mallory@example.com", nil, "no roles — sees 403 on role pages"},
	}
	got := DemoUsers()
	if len(got) != len(want) {
		t.Fatalf("DemoUsers() has %d users, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Subject != w.Subject || g.Username != w.Username || g.Name != w.Name || g.Email != w.Email ||
			!slices.Equal(g.Groups, w.Groups) {
			t.Errorf("DemoUsers()[%d] = %+v, want %+v", i, g, w)
		}
		// Descriptions are free text; each must say something, and
		// mallory's must warn about the 403s.
		if g.Description == "" || (w.Description != "" && g.Description != w.Description) {
			t.Errorf("DemoUsers()[%d].Description = %q, want non-empty (%q if set)", i, g.Description, w.Description)
		}
	}
	if err := validateUsers(got); err != nil {
		t.Errorf("validateUsers(DemoUsers()) = %v", err)
	}
}

func TestSignInAttemptsAreRateLimited(t *testing.T) {
	e := newEnv(t, DemoUsers())
	attempt := func(addr, username string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, e.issuer+"/login", strings.NewReader(url.Values{"authRequestID": {"unknown"}, "username": {username}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = addr + ":40000"
		rec := httptest.NewRecorder()
		e.p.Handler().ServeHTTP(rec, req)
		return rec
	}
	// One address hammering the picker, under many names: refused past
	// its burst...
	var refused *httptest.ResponseRecorder
	for i := range addrBurst + 1 {
		if rec := attempt("192.0.2.1", "nobody"+strconv.Itoa(i)); rec.Code == http.StatusTooManyRequests {
			refused = rec
			break
		}
	}
	if refused == nil || refused.Header().Get("Retry-After") == "" {
		t.Fatalf("%d attempts from one address were never refused with Retry-After", addrBurst+1)
	}
	// ...while another address signs in as usual.
	if rec := attempt("192.0.2.2", "alice"); rec.Code != http.StatusBadRequest {
		t.Errorf("another address's attempt = %d, want the usual answer (400 for an unknown request)", rec.Code)
	}
	// One name tried from many addresses: refused past its burst, while
	// other names go on.
	refused = nil
	for i := range userBurst + 1 {
		if rec := attempt("198.51.100."+strconv.Itoa(i+1), "bob"); rec.Code == http.StatusTooManyRequests {
			refused = rec
			break
		}
	}
	if refused == nil {
		t.Fatalf("%d attempts as bob were never refused", userBurst+1)
	}
	if rec := attempt("203.0.113.9", "carol"); rec.Code != http.StatusBadRequest {
		t.Errorf("carol's attempt while bob is limited = %d, want the usual answer", rec.Code)
	}
	// In time the budget comes back.
	e.clock.Advance(time.Minute)
	if rec := attempt("198.51.100.99", "bob"); rec.Code != http.StatusBadRequest {
		t.Errorf("bob's attempt a minute later = %d, want the usual answer", rec.Code)
	}
	// A real sign-in still works end to end.
	conf := e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret)
	e.login(t, conf, "dave")
}
