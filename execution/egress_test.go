package execution

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/platform/egress"
)

func TestCallbackHostCheck(t *testing.T) {
	prod := &Service{o: Options{}}
	dev := &Service{o: Options{AllowPrivateCallbacks: true}}
	ctx := context.Background()
	for _, host := range []string{"127.0.0.1", "169.254.169.254", "10.0.0.5", "localhost", "::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "198.18.0.1", "255.255.255.255"} {
		if err := prod.checkCallbackHost(ctx, host); err == nil {
			t.Errorf("production accepts a callback to %s", host)
		}
		if err := dev.checkCallbackHost(ctx, host); err != nil {
			t.Errorf("development refuses %s: %v", host, err)
		}
	}
	if err := prod.checkCallbackHost(ctx, "93.184.216.34"); err != nil {
		t.Errorf("production refuses a public address: %v", err)
	}
}

// TestCallbackClientRefusesLoopback checks the connect-time guard: a name
// that resolved elsewhere when the action was proposed (DNS rebinding), or
// any other way to reach a listener on this host, is refused by the dialer
// itself, and nothing reaches the listener.
func TestCallbackClientRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}

	prod := &Service{o: Options{}}
	dev := &Service{o: Options{AllowPrivateCallbacks: true}}

	// The listener answers when private callbacks are allowed, so a refusal
	// below is the guard's doing, not a dead port.
	resp, err := dev.callbackClient().Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatalf("development callback client cannot reach the loopback listener: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("listener hits = %d, want 1", hits.Load())
	}
	hits.Store(0)

	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "0.0.0.0"} {
		u := "http://" + host + ":" + port + "/"
		resp, err := prod.callbackClient().Post(u, "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
			t.Errorf("production callback client connected to %s (status %d)", u, resp.StatusCode)
			continue
		}
		if !errors.Is(err, egress.ErrInternal) {
			t.Errorf("production callback client to %s: %v, want the private-address refusal", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback listener received %d callbacks from the production client, want 0", n)
	}
}

func TestCallbackClientFollowsNoRedirects(t *testing.T) {
	var followed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	dev := &Service{o: Options{AllowPrivateCallbacks: true}}
	resp, err := dev.callbackClient().Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || followed.Load() != 0 {
		t.Errorf("callback answered %d, redirect followed %d times; want 307 and 0", resp.StatusCode, followed.Load())
	}
}
