package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/tools/sim"
)

// When a tool keeps failing, its breaker opens: journeys that need it fail
// fast with 503 dependency_unavailable and a Retry-After (the provider is
// not called), on-call sees the breaker open on the Dependencies page,
// and once the tool recovers the breaker's probe closes it again.
func TestBreakerOpensForAFailingToolAndOnCallSeesIt(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	in.Agent.Sim.SetFaults(sim.Faults{FailNext: 1 << 20})
	var last apiResp
	for range 12 {
		last = journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
		if last.code() == "dependency_unavailable" {
			break
		}
	}
	if last.Status != http.StatusServiceUnavailable || last.code() != "dependency_unavailable" || last.Header.Get("Retry-After") == "" {
		t.Fatalf("after repeated failures: %d %s (Retry-After %q), want 503 dependency_unavailable", last.Status, last.Raw, last.Header.Get("Retry-After"))
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	p := carol.get("/dependencies")
	if p.Status != http.StatusOK || !strings.HasPrefix(text(p, "dep-state-lookup_order"), "Open") {
		t.Errorf("Dependencies page = %d, lookup_order %q; want it open", p.Status, text(p, "dep-state-lookup_order"))
	}
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	if p := alice.get("/dependencies"); p.Status != http.StatusForbidden {
		t.Errorf("alice (approver) GET /dependencies = %d, want 403", p.Status)
	}
}

// /metrics is for scrapers on loopback, or elsewhere with the token; any
// other host finds nothing there.
func TestMetricsNeedLoopbackOrToken(t *testing.T) {
	s := &Server{cfg: config.Config{MetricsToken: "0123456789abcdef-token"}}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.RemoteAddr = "10.1.2.3:5555"
	if s.mayScrape(req) {
		t.Error("a remote scraper without the token may read /metrics")
	}
	req.Header.Set("Authorization", "Bearer wrong-token-0123456789")
	if s.mayScrape(req) {
		t.Error("a wrong token may read /metrics")
	}
	req.Header.Set("Authorization", "Bearer 0123456789abcdef-token")
	if !s.mayScrape(req) {
		t.Error("the right token may not read /metrics")
	}
	req = httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.RemoteAddr = "127.0.0.1:5555"
	if !s.mayScrape(req) {
		t.Error("loopback may not read /metrics")
	}
}
