package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/wardenhq/warden/platform/wait"
)

// Issue 23, finding 5: a sign-in started while the identity provider is
// still being discovered waits for that discovery (bounded) instead of
// landing back on /login.

func TestSignInDuringDiscoveryWaitsForIt(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	gate := make(chan struct{})
	idp.discoveryGate = gate
	in := startWarden(t, idp.env())
	// The gate opens once the sign-in below is in Warden's hands, so the
	// sign-in arrives while discovery (started with the server) is held.
	go func() {
		wait.For(10*time.Second, func() bool { return in.Server.inflight.Load() > 0 })
		close(gate)
	}()
	resp, err := newBrowser(t, in.URL).noRedirect().c.Get(in.URL + "/auth/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, idp.srv.URL+"/authorize") {
		t.Fatalf("GET /auth/login during discovery = %d to %q, want 302 to the provider's /authorize", resp.StatusCode, loc)
	}
	// And the whole sign-in goes through.
	if home := newBrowser(t, in.URL).signIn(); home.URL.Path != "/" {
		t.Errorf("sign-in after discovery ended at %s: %s", home.URL, text(home, "login-error"))
	}
}

func TestSignInGivesUpOnADiscoveryThatNeverAnswers(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	idp.discoveryGate = make(chan struct{}) // never closed
	in := startWarden(t, idp.env())
	in.Server.auth.mu.Lock()
	in.Server.auth.discoveryWait = 300 * time.Millisecond
	in.Server.auth.mu.Unlock()
	began := time.Now()
	p := newBrowser(t, in.URL).get("/auth/login")
	took := time.Since(began)
	if p.URL.Path != "/login" || p.Doc.Find(`[data-testid="idp-unreachable"]`).Length() != 1 {
		t.Fatalf("GET /auth/login with a discovery that never answers ended at %s (%d), want /login saying the provider is unreachable:\n%s", p.URL, p.Status, p.Body)
	}
	if took < 300*time.Millisecond || took > 3*time.Second {
		t.Errorf("gave up after %v, want about the bound of 300ms", took)
	}
	if logs := in.Logs.String(); !strings.Contains(logs, "sign-in refused: the identity provider is not discovered") {
		t.Errorf("the log does not say why the sign-in was refused:\n%s", logs)
	}
}
