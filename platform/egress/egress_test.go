package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestInternalAddresses(t *testing.T) {
	tests := []struct {
		name     string
		addr     string
		internal bool
	}{
		{"loopback", "127.0.0.1", true},
		{"loopback, rest of 127/8", "127.3.2.1", true},
		{"IPv6 loopback", "::1", true},
		{"private 10/8", "10.1.2.3", true},
		{"private 172.16/12", "172.16.0.1", true},
		{"private 192.168/16", "192.168.1.1", true},
		{"link-local (cloud metadata)", "169.254.169.254", true},
		{"unspecified", "0.0.0.0", true},
		{"this network 0/8", "0.1.2.3", true},
		{"IPv6 unspecified", "::", true},
		{"IPv6 link-local", "fe80::1", true},
		{"IPv6 link-local with zone", "fe80::1%eth0", true},
		{"unique local fc00::/7", "fd00::1", true},
		{"site-local (deprecated)", "fec0::1", true},
		{"carrier-grade NAT", "100.64.0.1", true},
		{"IETF protocol assignments 192.0.0/24", "192.0.0.8", true},
		{"documentation TEST-NET-1", "192.0.2.10", true},
		{"documentation TEST-NET-2", "198.51.100.10", true},
		{"documentation TEST-NET-3", "203.0.113.10", true},
		{"6to4 relay anycast", "192.88.99.1", true},
		{"benchmarking 198.18/15", "198.18.0.1", true},
		{"benchmarking, upper half", "198.19.255.254", true},
		{"reserved 240/4", "240.0.0.1", true},
		{"broadcast", "255.255.255.255", true},
		{"multicast", "224.0.0.1", true},
		{"IPv6 multicast", "ff02::1", true},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", true},
		{"IPv4-mapped private", "::ffff:10.0.0.1", true},
		{"IPv4-mapped metadata", "::ffff:169.254.169.254", true},
		{"IPv4-compatible loopback", "::127.0.0.1", true},
		{"IPv4-compatible private", "::10.0.0.1", true},
		{"IPv4-compatible public (deprecated form)", "::8.8.8.8", true},
		{"NAT64 of loopback", "64:ff9b::127.0.0.1", true},
		{"NAT64 of private", "64:ff9b::10.0.0.1", true},
		{"NAT64 of metadata", "64:ff9b::a9fe:a9fe", true},
		{"local-use NAT64", "64:ff9b:1::8.8.8.8", true},
		{"6to4 of loopback", "2002:7f00:1::1", true},
		{"6to4 of private", "2002:c0a8:101::1", true},
		{"6to4 of metadata", "2002:a9fe:a9fe::1", true},
		{"discard-only 100::/64", "100::1", true},
		{"Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
		{"IPv6 benchmarking", "2001:2::1", true},
		{"IPv6 documentation", "2001:db8::1", true},
		{"IPv6 documentation 3fff::/20", "3fff::1", true},
		{"SRv6 SIDs", "5f00::1", true},

		{"public IPv4", "8.8.8.8", false},
		{"public IPv4, example.com", "93.184.216.34", false},
		{"public IPv4 next to CGN", "100.128.0.1", false},
		{"public IPv4 next to benchmarking", "198.20.0.1", false},
		{"public IPv4 below 240/4", "223.255.255.254", false},
		{"public IPv6", "2606:4700::1", false},
		{"public IPv6, Cloudflare DNS", "2606:4700:4700::1111", false},
		{"public IPv6, Google DNS", "2001:4860:4860::8888", false},
		{"IPv4-mapped public", "::ffff:8.8.8.8", false},
		{"NAT64 of public", "64:ff9b::8.8.8.8", false},
		{"6to4 of public", "2002:808:808::1", false},
	}
	for _, tt := range tests {
		if got := Internal(netip.MustParseAddr(tt.addr)); got != tt.internal {
			t.Errorf("%s: Internal(%s) = %v, want %v", tt.name, tt.addr, got, tt.internal)
		}
	}
	if !Internal(netip.Addr{}) {
		t.Error("Internal(zero Addr) = false, want true")
	}
}

// A listener on loopback, and how many requests reached it.
func loopbackListener(t *testing.T) (*httptest.Server, *atomic.Int32, string) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return srv, &hits, port
}

// The zero policy refuses every way to reach this host at connect time,
// whatever the name; a listed host is let through, and only that host.
func TestPolicyRefusesInternalAtConnectUnlessListed(t *testing.T) {
	_, hits, port := loopbackListener(t)
	client := func(p Policy) *http.Client {
		return &http.Client{Transport: p.Transport(), CheckRedirect: NoRedirects}
	}
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "0.0.0.0"} {
		u := "http://" + host + ":" + port + "/"
		resp, err := client(Policy{}).Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("the zero policy connected to %s (status %d)", u, resp.StatusCode)
			continue
		}
		if !errors.Is(err, ErrInternal) {
			t.Errorf("the zero policy to %s: %v, want ErrInternal", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the listener got %d requests through the zero policy, want 0", n)
	}

	listed := Policy{AllowHost: func(h string) bool { return h == "127.0.0.1" }}
	resp, err := client(listed).Get("http://127.0.0.1:" + port + "/")
	if err != nil {
		t.Fatalf("a listed host was refused: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("listener hits = %d, want 1", hits.Load())
	}
	// Another name for the same address is not the listed host.
	if resp, err := client(listed).Get("http://localhost:" + port + "/"); err == nil {
		resp.Body.Close()
		t.Error("localhost passed a policy that lists 127.0.0.1 only")
	}
	if err := listed.Check(context.Background(), "127.0.0.1"); err != nil {
		t.Errorf("Check of a listed host: %v", err)
	}
	for _, host := range []string{"localhost", "169.254.169.254", "[::1]", "10.0.0.7"} {
		if err := listed.Check(context.Background(), host); !errors.Is(err, ErrInternal) {
			t.Errorf("Check(%s) = %v, want ErrInternal", host, err)
		}
	}
	if err := (Policy{}).Check(context.Background(), "93.184.216.34"); err != nil {
		t.Errorf("Check of a public address: %v", err)
	}
	if err := (Policy{AllowInternal: true}).Check(context.Background(), "127.0.0.1"); err != nil {
		t.Errorf("AllowInternal refuses loopback: %v", err)
	}
}

func TestNormalHost(t *testing.T) {
	for in, want := range map[string]string{"LLM.Corp.": "llm.corp", "[::1]": "::1", " 127.0.0.1 ": "127.0.0.1"} {
		if got := NormalHost(in); got != want {
			t.Errorf("NormalHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNoRedirects(t *testing.T) {
	var followed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := &http.Client{Transport: Policy{AllowInternal: true}.Transport(), CheckRedirect: NoRedirects}
	resp, err := c.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || followed.Load() != 0 {
		t.Errorf("answered %d, redirect followed %d times; want 307 and 0", resp.StatusCode, followed.Load())
	}
}
