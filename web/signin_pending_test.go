package web

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	gsessions "github.com/gorilla/sessions"
)

// TestOldestSignInInProgressGivesWay: one more sign-in than a browser may
// have in progress, all started within the same second, evicts the first
// one started, every time, and leaves the others usable.
func TestOldestSignInInProgressGivesWay(t *testing.T) {
	idp := newTestProvider(t, jose.RS256)
	clk := &clock{t: time.Now().Truncate(time.Second)}
	in := startClock(t, idp.env(), false, clk.now)
	in.waitReady(t)
	b := newBrowser(t, in.URL)

	var tabs []*url.URL
	for range maxPendingLogins + 1 {
		tabs = append(tabs, b.startLogin())
		clk.advance(time.Millisecond) // all within one second
	}
	if p := b.get(tabs[0].String()); p.Status != http.StatusBadRequest {
		t.Errorf("the oldest sign-in, after %d newer ones = %d at %s, want 400 (evicted)", maxPendingLogins, p.Status, p.URL)
	}
	for i, tab := range tabs[1:] {
		if p := b.get(tab.String()); p.URL.Path != "/" {
			t.Errorf("sign-in %d of %d ended at %s (%d): %s, want / (only the oldest gives way)", i+2, len(tabs), p.URL, p.Status, text(p, "login-error"))
		}
	}
}

// TestPendingLoginsEvictOldestExactly: the eviction compares the exact
// start times, and a tie (a clock that did not move) is broken the same
// way every time.
func TestPendingLoginsEvictOldestExactly(t *testing.T) {
	base := time.Now().Truncate(time.Second)
	for range 50 {
		m := map[string]pendingLogin{}
		for i := range maxPendingLogins + 1 {
			m[string(rune('a'+i))] = pendingLogin{Started: base.Add(time.Duration(i) * time.Microsecond).UnixNano()}
		}
		evictOldest(m)
		if _, ok := m["a"]; ok || len(m) != maxPendingLogins {
			t.Fatalf("after eviction %d remain, a (the oldest) kept = %v; want %d without a", len(m), ok, maxPendingLogins)
		}
		tie := map[string]pendingLogin{}
		for i := range maxPendingLogins + 1 {
			tie[string(rune('a'+i))] = pendingLogin{Started: base.UnixNano()}
		}
		evictOldest(tie)
		if _, ok := tie["a"]; ok {
			t.Fatalf("a tie evicted another than the first state in order: %v", tie)
		}
	}
}

// TestPendingLoginWrittenInSecondsStillCounts: a sign-in in progress in a
// cookie written before the start time had nanoseconds (field "t", unix
// seconds) is read with its start, not dropped as fifty years old.
func TestPendingLoginWrittenInSecondsStillCounts(t *testing.T) {
	now := time.Now()
	f := gsessions.NewSession(nil, flowCookieName)
	f.Values[flowLogins] = `{"st":{"n":"nonce","v":"verifier","t":` + strconv.FormatInt(now.Add(-time.Minute).Unix(), 10) + `}}`
	m := pendingLogins(f, now)
	p, ok := m["st"]
	if !ok || time.Unix(0, p.Started).Unix() != now.Add(-time.Minute).Unix() {
		t.Fatalf("pendingLogins(old cookie) = %+v, want st started a minute ago", m)
	}
}
