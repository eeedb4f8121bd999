package web

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools/sim"
)

func TestShutdownDrainsInOrder(t *testing.T) {
	in := startWarden(t, map[string]string{"WARDEN_DRAIN_DELAY": "700ms"})
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("erin")
	tok := b.csrf()

	// An in-flight request: its body arrives slowly, so the handler is
	// still reading it when shutdown begins.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, in.URL+"/audit/verify", pr)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.ContentLength = int64(len("_csrf=" + tok))
	type result struct {
		status int
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := b.c.Do(req)
		if err != nil {
			inflight <- result{err: err}
			return
		}
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode}
	}()
	if _, err := pw.Write([]byte("_csrf=")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the in-flight request reached its handler", func() bool { return in.Server.inflight.Load() > 0 })

	in.stop()

	// Readiness turns 503 while the listener still accepts connections.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var ready int
	if !wait.For(5*time.Second, func() bool {
		resp, err := probe.Get(in.URL + "/readyz")
		if err != nil {
			t.Fatalf("listener closed before readiness reported 503: %v", err)
		}
		resp.Body.Close()
		ready = resp.StatusCode
		return ready == http.StatusServiceUnavailable
	}) {
		t.Fatalf("readyz still %d after shutdown began", ready)
	}
	if resp, err := probe.Get(in.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz during drain = %v, %v; want 200 (liveness checks nothing)", resp, err)
	}

	// The in-flight request finishes with a real answer.
	u, _ := url.Parse(in.URL)
	waitUntil(t, "the listener closed after the drain delay", func() bool {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	if _, err := pw.Write([]byte(tok)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	select {
	case r := <-inflight:
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("in-flight request = %d, %v; want 200", r.status, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight request never finished")
	}

	// Then the server is gone.
	select {
	case err := <-in.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		in.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Error("listener still accepts connections after shutdown")
	} else if !errors.Is(err, syscall.ECONNREFUSED) && !strings.Contains(err.Error(), "refused") {
		t.Logf("dial after shutdown: %v", err)
	}
	// Still open: the test's cleanup closes it after Serve returned.
	if err := in.DB.Ready(t.Context()); err != nil {
		t.Errorf("database closed by the server; the caller owns it: %v", err)
	}
}

// When the shutdown grace runs out, the requests still running are
// cancelled before Serve returns (and so before the database closes): a
// journey stuck on a hanging provider ends, and its budget reservation
// comes back, instead of staying "running" for the next process to sweep.
func TestShutdownGraceOverrunReleasesWhatRequestsHold(t *testing.T) {
	in := startWardenDemo(t, map[string]string{"WARDEN_SHUTDOWN_GRACE": "300ms"})
	in.waitReady(t)
	in.Agent.Sim.SetFaults(sim.Faults{Delay: time.Hour}) // the provider hangs
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		req, _ := http.NewRequest(http.MethodPost, in.URL+"/v1/journeys", strings.NewReader(`{"input":"Where is my order ORD-1003?"}`))
		req.Header.Set("Authorization", "Bearer "+in.DemoKey)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	wait.Until(t, 10*time.Second, "the journey to start", func() bool { return running(t, in) > 0 })

	in.stop()
	select {
	case err := <-in.done:
		if err == nil || !strings.Contains(err.Error(), "did not finish") {
			t.Errorf("Serve = %v, want the grace-overrun error", err)
		}
		in.done <- nil // for the harness's Stop
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the grace ran out")
	}
	if n := running(t, in); n != 0 {
		t.Errorf("%d journeys still running after shutdown", n)
	}
	var reserved int64
	if err := in.DB.Read().QueryRow(`SELECT COALESCE(SUM(reserved_micros), 0) FROM budgets`).Scan(&reserved); err != nil {
		t.Fatal(err)
	}
	if reserved != 0 {
		t.Errorf("%d micro-units still reserved after shutdown, want 0", reserved)
	}
	<-answered
}

func running(t *testing.T, in *instance) int {
	t.Helper()
	var n int
	if err := in.DB.Read().QueryRow(`SELECT COUNT(*) FROM journeys WHERE status = 'running'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A connection that never sent a request (a client's spare dial, a load
// balancer's pool) does not hold shutdown up: http.Server.Shutdown alone
// waits 5 s for it, longer than this grace.
func TestShutdownDoesNotWaitForUnusedConnections(t *testing.T) {
	in := startWarden(t, map[string]string{"WARDEN_SHUTDOWN_GRACE": "2s"})
	unused, err := net.Dial("tcp", strings.TrimPrefix(in.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	// Connections are accepted in order: once a later one is answered,
	// the unused one has been accepted too.
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := probe.Get(in.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	in.stop()
	select {
	case err := <-in.done:
		if err != nil {
			t.Fatalf("Serve = %v, want a clean shutdown within the grace", err)
		}
		in.done <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	unused.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := unused.Read(make([]byte, 1)); err == nil {
		t.Error("the unused connection is still open after shutdown")
	}
}
