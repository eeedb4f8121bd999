package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestReleaseReplayInTheConsole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	candidate := demoHistory(t, in)[1].Digest
	for range 2 {
		journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	}

	if p := carol.get("/releases"); p.Doc.Find(`[data-testid="replay-form"]`).Length() != 1 {
		t.Fatal("no Replay candidate form on the Releases page")
	}
	events := auditCount(t, in.DB)
	q := url.Values{"candidate": {candidate}, "skill": {"order_status"}, "n": {"10"}}
	p := carol.get("/releases/replay?" + q.Encode())
	if p.Status != http.StatusOK {
		t.Fatalf("GET replay = %d, want 200", p.Status)
	}
	// The demo's seeded journeys count too: at least the two above.
	n := p.Doc.Find(`[data-testid="replay-table"] tbody tr`).Length()
	if got := text(p, "replay-rate"); n < 2 || !strings.HasPrefix(got, "Route agreement: 100.0 % (") {
		t.Errorf("replay rate = %q over %d rows; want 100 %% over at least 2", got, n)
	}
	if text(p, "replay-routing-note") == "" {
		t.Error("the replay does not say which router routed")
	}
	if auditCount(t, in.DB) != events {
		t.Error("a replay wrote an audit event")
	}
	q.Set("n", "201")
	if p := carol.get("/releases/replay?" + q.Encode()); p.Status < 400 || p.Status >= 500 {
		t.Errorf("n=201 = %d, want a 4xx", p.Status)
	}

	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	if p := alice.get("/releases/replay?" + url.Values{"candidate": {candidate}, "skill": {"order_status"}, "n": {"10"}}.Encode()); p.Status != http.StatusForbidden {
		t.Errorf("alice GET replay = %d, want 403", p.Status)
	}
}
