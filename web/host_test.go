package web

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A page on another site that rebinds its name to 127.0.0.1 reaches a
// development server with its own name in Host: refused with 421 and a
// sentence naming where the server answers. The server's own names work.
func TestDevModeRefusesOtherHosts(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	want := "This development server answers only at " + in.URL + "; open it there."
	send := func(host, path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, in.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/login", "/dev-idp/.well-known/openid-configuration", "/dev-idp/login", "/v1/journeys"} {
		for _, host := range []string{"rebind.evil.example", "rebind.evil.example:" + portOf(t, in.URL)} {
			status, body := send(host, path)
			if status != http.StatusMisdirectedRequest || !strings.Contains(body, want) {
				t.Errorf("Host %s on %s = %d %q, want 421 with %q", host, path, status, body, want)
			}
		}
	}
	if status, body := send("rebind.evil.example", "/v1/journeys"); !strings.Contains(body, `"code":"misdirected_request"`) {
		t.Errorf("/v1 refusal = %d %s, want the API's error shape", status, body)
	}
	// Probes answer whatever the Host: an orchestrator asks by address.
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := send("10.0.0.7:8080", path); status != http.StatusOK {
			t.Errorf("%s with Host 10.0.0.7:8080 = %d %s, want 200", path, status, body)
		}
	}

	// The public URL's host and the loopback aliases of the listen address.
	p := portOf(t, in.URL)
	for _, host := range []string{parseURL(t, in.URL).Host, "localhost:" + p, "[::1]:" + p, "LOCALHOST:" + p} {
		if status, body := send(host, "/login"); status != http.StatusOK {
			t.Errorf("Host %s on /login = %d, want 200: %s", host, status, body)
		}
	}
	if status, _ := send("localhost:1", "/login"); status != http.StatusMisdirectedRequest {
		t.Errorf("a loopback name on another port = %d, want 421", status)
	}
	if !strings.Contains(in.Logs.String(), "unknown Host in development mode") {
		t.Error("the refusal is not logged")
	}
}

// In production the names that reach Warden are the load balancer's
// business: no Host is refused.
func TestProductionModeAcceptsAnyHost(t *testing.T) {
	srv := productionServer(t)
	for _, path := range []string{"/healthz", "/login"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "rebind.evil.example"
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code == http.StatusMisdirectedRequest {
			t.Errorf("production %s with another Host = 421, want it served", path)
		}
	}
}

func parseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	v, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func portOf(t *testing.T, raw string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(parseURL(t, raw).Host)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
