package web

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Issue 23, finding 1: a provider that rotates its ID-token keys to
// another algorithm while Warden runs does not lock everyone out.

func TestSigningKeyRotationToAnotherAlgorithm(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	in := startWarden(t, idp.env())
	in.waitReady(t)
	if home := newBrowser(t, in.URL).signIn(); home.URL.Path != "/" {
		t.Fatalf("RS256 sign-in ended at %s: %s", home.URL, text(home, "login-error"))
	}

	idp.rotate(jose.ES256)
	discoveries, _ := idp.counts()
	// Three sign-ins at once meet the new algorithm: each succeeds, and
	// discovery is read again once between them (each start also probes
	// it once, reachable).
	const n = 3
	var wg sync.WaitGroup
	pages := make([]page, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pages[i] = newBrowser(t, in.URL).signIn()
		}()
	}
	wg.Wait()
	for i, home := range pages {
		if home.URL.Path != "/" || text(home, "whoami-name") != "Tess Provider" {
			t.Errorf("sign-in %d after the rotation to ES256 ended at %s (%d): %s", i, home.URL, home.Status, text(home, "login-error"))
		}
	}
	if after, _ := idp.counts(); after-discoveries != n+1 {
		t.Errorf("discovery read %d times for %d sign-ins, want %d (one probe each and one re-read)", after-discoveries, n, n+1)
	}
	if logs := in.Logs.String(); !strings.Contains(logs, "reading discovery again") || !strings.Contains(logs, "alg=ES256") {
		t.Errorf("the log does not say discovery was read again for ES256:\n%s", logs)
	}
}

func TestUnlistedAlgorithmIsNamedAndRereadsAreRateLimited(t *testing.T) {
	idp := newTestProvider(t, jose.ES256)
	idp.listAlgs = []string{"RS256"} // discovery lies about the algorithm
	in := startWarden(t, idp.env())
	in.waitReady(t)
	discoveries, _ := idp.counts()
	for i := range 2 {
		p := newBrowser(t, in.URL).signIn()
		if p.Status != http.StatusUnauthorized || !strings.Contains(text(p, "login-error"), "ES256") {
			t.Fatalf("sign-in %d = %d %q, want 401 naming ES256", i, p.Status, text(p, "login-error"))
		}
		if ev := lastAudit(t, in.DB); ev.Subject.ID != "unexpected_algorithm" {
			t.Errorf("sign-in %d audited as %s, want unexpected_algorithm", i, ev.Subject.ID)
		}
	}
	// Two probes, one re-read: the second sign-in is within the minute.
	if after, _ := idp.counts(); after-discoveries != 3 {
		t.Errorf("discovery read %d times for 2 refused sign-ins, want 3 (two probes, one re-read)", after-discoveries)
	}
	if logs := in.Logs.String(); !strings.Contains(logs, "alg=ES256") {
		t.Errorf("the log does not name ES256:\n%s", logs)
	}
}
