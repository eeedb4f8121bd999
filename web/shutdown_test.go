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
	time.Sleep(100 * time.Millisecond) // the request is now being served

	in.stop()

	// Readiness turns 503 while the listener still accepts connections.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := probe.Get(in.URL + "/readyz")
		if err != nil {
			t.Fatalf("listener closed before readiness reported 503: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz still %d after shutdown began", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if resp, err := probe.Get(in.URL + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz during drain = %v, %v; want 200 (liveness checks nothing)", resp, err)
	}

	// The in-flight request finishes with a real answer.
	time.Sleep(900 * time.Millisecond) // past the drain delay: the listener is closing
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
	u, _ := url.Parse(in.URL)
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
