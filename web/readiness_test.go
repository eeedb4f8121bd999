package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store/storetest"
)

// readyBody is /readyz's 503 body.
type readyBody struct {
	Status, Reason, Failed, Detail string
}

// getReadyz asks /readyz and gives up at a deadline of 5 s: well past the
// check's bound, well before a load balancer's patience would matter.
func getReadyz(t *testing.T, url string) (int, readyBody) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("/readyz did not answer before the deadline: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var b readyBody
	_ = json.Unmarshal(raw, &b)
	return resp.StatusCode, b
}

// A database check that stalls, whatever the driver does with the
// deadline, does not stall readiness: /readyz answers 503 at its bound and
// says the database did not answer; a second probe meanwhile joins the
// stalled check instead of starting another.
func TestReadyzAnswersAtItsBoundWhenTheCheckStalls(t *testing.T) {
	t.Parallel()
	in := startWarden(t, nil)
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int32
	in.Server.ready.timeout = 200 * time.Millisecond
	in.Server.ready.check = func(context.Context) error {
		calls.Add(1)
		<-release // ignores its context, as a stuck driver would
		return nil
	}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			in.Server.echo.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		}()
		select {
		case <-done:
		case <-ctx.Done():
			cancel()
			t.Fatalf("/readyz %d with a stalled database check did not answer within 5 s", i)
		}
		cancel()
		var b readyBody
		_ = json.Unmarshal(rec.Body.Bytes(), &b)
		if rec.Code != http.StatusServiceUnavailable || b.Status != "unavailable" || b.Reason != "database" || b.Failed != "database" ||
			!strings.Contains(b.Detail, "did not answer within 200ms") {
			t.Errorf("/readyz %d with a stalled check = %d %s, want 503 unavailable, failed database, saying it did not answer within 200ms",
				i, rec.Code, rec.Body)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("stalled check started %d times, want once (later probes join it)", n)
	}
}

// With PostgreSQL's packets dropped (connections open, nothing answers),
// /readyz answers 503 within its bound naming the database, and an agent
// whose key cannot be checked gets what every path answers when the
// database is not answering: 503 storage_unavailable, Retry-After 5.
// Both recover once the network does.
func TestReadyzAndKeyCheckWhenPostgresStopsAnswering(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	t.Parallel()
	proxy, dsn := storetest.NewProxy(t, storetest.URL(t))
	in := startWardenDemo(t, map[string]string{"WARDEN_DATABASE_URL": dsn})
	if st, b := getReadyz(t, in.URL); st != http.StatusOK {
		t.Fatalf("/readyz before the outage = %d %+v", st, b)
	}
	proxy.BlackHole(true)
	lifted := false
	defer func() {
		if !lifted {
			proxy.BlackHole(false)
		}
	}()
	start := time.Now()
	st, b := getReadyz(t, in.URL)
	if st != http.StatusServiceUnavailable || b.Status != "unavailable" || b.Reason != "database" || b.Failed != "database" {
		t.Errorf("/readyz with the database black-holed = %d %+v, want 503 unavailable, failed database", st, b)
	}
	t.Logf("/readyz answered in %v", time.Since(start))
	j := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	if j.Status != http.StatusServiceUnavailable || j.code() != "storage_unavailable" || j.Header.Get("Retry-After") != "5" {
		t.Errorf("journey with the database black-holed = %d %s (Retry-After %q), want 503 storage_unavailable, Retry-After 5: %s",
			j.Status, j.code(), j.Header.Get("Retry-After"), j.Raw)
	}
	proxy.BlackHole(false)
	lifted = true
	waitUntil(t, "/readyz to answer 200 once the network is back", func() bool {
		st, _ := getReadyz(t, in.URL)
		return st == http.StatusOK
	})
	if j := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); j.Status != http.StatusOK {
		t.Errorf("journey after recovery = %d %s", j.Status, j.Raw)
	}
}
