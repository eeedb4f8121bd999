package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/web/browsertest"

	"github.com/chromedp/chromedp"
	jose "github.com/go-jose/go-jose/v4"
)

// idpSessions makes the test provider behave as Hydra, Keycloak or Okta do
// at sign-out. It remembers who signed in (a cookie of its own), so
// /authorize signs that browser in again without asking; and its
// end-session endpoint sends the browser to a logout page on another
// origin, which sends it back to the provider (/end_session/done) to end
// the provider session and go on to the post-logout redirect URI.
type idpSessions struct {
	p  *testProvider
	ui *httptest.Server // the logout page: another port, another origin

	mu       sync.Mutex
	live     map[string]bool   // provider session ids
	logouts  map[string]string // logout challenge → post_logout_redirect_uri
	asked    int               // times /authorize asked who signs in
	uiVisits int               // times the logout page was shown
}

const idpSessionCookie = "tp_session"

// withIdPSessions gives p provider sessions and a logout page of its own.
func withIdPSessions(t testing.TB, p *testProvider) *idpSessions {
	t.Helper()
	s := &idpSessions{p: p, live: map[string]bool{}, logouts: map[string]string{}}
	s.ui = httptest.NewServer(http.HandlerFunc(s.logoutPage))
	t.Cleanup(s.ui.Close)
	p.set(func(p *testProvider) { p.sessions = s })
	return s
}

func (p *testProvider) sess() *idpSessions {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions
}

// signedIn reports whether r's browser has a provider session; without one
// it answers with the provider's "who is signing in?" page.
func (s *idpSessions) signedIn(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, err := r.Cookie(idpSessionCookie); err == nil && s.live[c.Value] {
		return true
	}
	s.asked++
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Test provider</title><h1 data-testid="tp-ask">Who is signing in?</h1><a data-testid="tp-continue" href="/authorize/as?%s">Continue</a>`,
		html.EscapeString(r.URL.RawQuery))
	return false
}

func (s *idpSessions) counts() (asked, uiVisits int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked, s.uiVisits
}

// authorizeAs is the "Continue" of the provider's page: it starts a
// provider session and goes on with the authorization request.
func (p *testProvider) authorizeAs(w http.ResponseWriter, r *http.Request) {
	s := p.sess()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	id := randomToken()
	s.mu.Lock()
	s.live[id] = true
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: idpSessionCookie, Value: id, Path: "/", HttpOnly: true})
	r.AddCookie(&http.Cookie{Name: idpSessionCookie, Value: id})
	p.authorize(w, r)
}

// toLogoutPage sends an end-session request on to the logout page.
func (s *idpSessions) toLogoutPage(w http.ResponseWriter, r *http.Request) bool {
	challenge := randomToken()
	s.mu.Lock()
	s.logouts[challenge] = r.URL.Query().Get("post_logout_redirect_uri")
	s.mu.Unlock()
	http.Redirect(w, r, s.ui.URL+"/logout?logout_challenge="+challenge, http.StatusFound)
	return true
}

// logoutPage is the provider's logout UI on its other origin: it accepts
// the logout and sends the browser back to the provider.
func (s *idpSessions) logoutPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.uiVisits++
	s.mu.Unlock()
	http.Redirect(w, r, s.p.srv.URL+"/end_session/done?logout_challenge="+r.URL.Query().Get("logout_challenge"), http.StatusFound)
}

// endSessionDone ends the provider session and goes to the post-logout
// redirect URI.
func (p *testProvider) endSessionDone(w http.ResponseWriter, r *http.Request) {
	s := p.sess()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	challenge := r.URL.Query().Get("logout_challenge")
	s.mu.Lock()
	back, ok := s.logouts[challenge]
	delete(s.logouts, challenge)
	if c, err := r.Cookie(idpSessionCookie); err == nil {
		delete(s.live, c.Value)
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown logout challenge", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: idpSessionCookie, Value: "", Path: "/", MaxAge: -1})
	if back == "" {
		_, _ = w.Write([]byte("signed out at the provider"))
		return
	}
	http.Redirect(w, r, back, http.StatusFound)
}

// chromiumContext starts a headless Chromium for one test (browsertest).
func chromiumContext(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Context(t)
}

func testID(id string) string { return `[data-testid="` + id + `"]` }

// TestBrowserSignOutThroughTheProvidersLogoutPage: in Chromium, signing
// out goes through the provider's end-session endpoint and its logout
// page on another origin and comes back to the sign-in page saying so;
// the provider session is gone, so the next "Continue" asks who is
// signing in instead of signing the same person straight back in.
// (Answered with a redirect, the sign-out form's navigation was aborted
// by form-action at the hop to the logout page, and the browser stayed on
// the old page.)
func TestBrowserSignOutThroughTheProvidersLogoutPage(t *testing.T) {
	ctx := chromiumContext(t)
	idp := newTestProvider(t, jose.RS256)
	sessions := withIdPSessions(t, idp)
	in := startWarden(t, idp.env())
	in.waitReady(t)

	err := chromedp.Do(ctx,
		chromedp.Navigate(in.URL+"/login"),
		chromedp.WaitVisible(testID("login-button")),
		chromedp.Click(testID("login-button")),
		chromedp.WaitVisible(testID("tp-continue")),
		chromedp.Click(testID("tp-continue")),
		chromedp.WaitVisible(testID("whoami")),
	)
	if err != nil {
		t.Fatalf("sign in: %v\nlogs:\n%s", err, in.Logs)
	}

	wait, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.Click(testID("logout")), chromedp.WaitVisible(testID("signed-out"))); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("sign-out did not come back to the sign-in page saying so; the browser is at %s: %v\nlogs:\n%s", loc, err, in.Logs)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if want := in.URL + "/login"; loc != want {
		t.Errorf("after sign-out the browser is at %s, want %s", loc, want)
	}
	if _, visits := sessions.counts(); visits != 1 || len(idp.endSessionCalls()) != 1 {
		t.Errorf("end-session calls = %d, logout page visits = %d; want 1 and 1", len(idp.endSessionCalls()), visits)
	}

	// Warden's session is gone, and so is the provider's: the next
	// "Continue" asks who is signing in.
	err = chromedp.Do(ctx,
		chromedp.Navigate(in.URL+"/"),
		chromedp.WaitVisible(testID("login-button")),
		chromedp.Click(testID("login-button")),
		chromedp.WaitVisible(testID("tp-ask")),
	)
	if err != nil {
		loc, _ = chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("the next sign-in did not ask who is signing in (at %s): %v", loc, err)
	}
	if asked, _ := sessions.counts(); asked != 2 {
		t.Errorf("the provider asked who is signing in %d times, want 2 (the first sign-in and the one after sign-out)", asked)
	}
}

// continueSignOut does what the sign-out hand-off page does in a browser:
// it follows the page's link on to the provider's end-session endpoint.
func (b *browser) continueSignOut(handoff page) page {
	b.t.Helper()
	href, ok := handoff.Doc.Find(testID("signout-continue")).Attr("href")
	if handoff.Status != http.StatusOK || !ok || href == "" {
		b.t.Fatalf("sign-out answered %d at %s without the link on to the provider:\n%s", handoff.Status, handoff.URL, handoff.Body)
	}
	return b.get(href)
}

// TestSignOutHandOffPage: the sign-out form is answered by a page of
// Warden's, not a redirect, with the same CSP as every page (form-action
// as strict as ever), a link to the end-session endpoint and a script
// from 'self' that follows it, nothing inline, nothing cached, and no
// trace of the signed-out user.
func TestSignOutHandOffPage(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.signIn()
	csp := b.get("/login").Header.Get("Content-Security-Policy")
	copied := b.sessionCookieValue()

	out := b.noRedirect().post("/auth/logout", url.Values{"_csrf": {b.csrf()}}, nil)
	if out.Status != http.StatusOK || out.Doc.Find(testID("signout-handoff")).Length() != 1 {
		loc, _, _ := strings.Cut(out.Header.Get("Location"), "?") // not the ID token
		t.Fatalf("POST /auth/logout = %d (Location %q), want 200 with the hand-off page", out.Status, loc)
	}
	if got := out.Header.Get("Content-Security-Policy"); got != csp || !strings.Contains(got, "script-src 'self'") {
		t.Errorf("hand-off page CSP = %q, want the sign-in page's %q", got, csp)
	}
	if cc := out.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control = %q, want no-store (the link carries the ID token)", cc)
	}
	href, _ := out.Doc.Find(testID("signout-continue")).Attr("href")
	end, err := url.Parse(href)
	if err != nil || end.Scheme+"://"+end.Host+end.Path != idp.srv.URL+"/end_session" ||
		end.Query().Get("id_token_hint") != idp.lastIssued() || end.Query().Get("post_logout_redirect_uri") != in.URL+"/login" {
		t.Errorf("continue link = %q, want the end-session endpoint with the ID token and the way back", href)
	}
	scripts := out.Doc.Find("script")
	if src, _ := scripts.Attr("src"); scripts.Length() != 1 || src != "/static/signout.js" || strings.TrimSpace(scripts.Text()) != "" {
		t.Errorf("hand-off page scripts: %d, first src %q; want only /static/signout.js, nothing inline", scripts.Length(), src)
	}
	if out.Doc.Find(testID("logout")).Length() != 0 || out.Doc.Find(testID("user-name")).Length() != 0 {
		t.Error("the hand-off page still shows the signed-out user's menu")
	}
	if js := b.get("/static/signout.js"); js.Status != http.StatusOK || !strings.Contains(js.Body, "data-signout-continue") {
		t.Errorf("GET /static/signout.js = %d", js.Status)
	}
	// Warden's session ended before the page was sent.
	thief := newBrowser(t, in.URL)
	u, _ := url.Parse(in.URL)
	thief.c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookieName, Value: copied, Path: "/"}})
	if p := thief.get("/"); p.URL.Path != "/login" {
		t.Errorf("with the session cookie of before the hand-off page GET / ended at %s, want /login", p.URL)
	}
	// The link leads through the provider back to the sign-in page.
	if back := b.continueSignOut(out); back.URL.Path != "/login" || text(back, "signed-out") == "" {
		t.Errorf("following the link ended at %s (%d), want the sign-in page saying so", back.URL, back.Status)
	}
}
