package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/wardenhq/warden/config"
)

// devServer runs a development-mode server on ln with env, without the
// agent runtime: enough for its identity provider.
func devServer(t *testing.T, ln net.Listener, env map[string]string) (*Server, *syncBuffer) {
	t.Helper()
	vals := map[string]string{"WARDEN_ADDR": ln.Addr().String(), "WARDEN_DRAIN_DELAY": "0s"}
	for k, v := range env {
		vals[k] = v
	}
	cfg, err := config.Load(nil, func(k string) (string, bool) { v, ok := vals[k]; return v, ok })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg = cfg.WithListenAddr(ln.Addr().String())
	db := openStore(t, cfg)
	logs := &syncBuffer{}
	srv, err := New(Options{Config: cfg, DB: db, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		db.Close()
	})
	return srv, logs
}

// announcedIssuer is the issuer in the discovery document the server on
// ln serves.
func announcedIssuer(t *testing.T, ln net.Listener) string {
	t.Helper()
	resp, err := http.Get("http://" + ln.Addr().String() + "/dev-idp/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("discovery at %s = %d, %v", ln.Addr(), resp.StatusCode, err)
	}
	return doc.Issuer
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Two development processes on different ports sharing a data directory
// and a public URL announce one issuer, the public URL's, so a demo user
// is one principal whichever process signed them in.
func TestDevIssuerIsThePublicURLNotTheListenAddress(t *testing.T) {
	env := testEnv(t, nil)
	a, b := listen(t), listen(t)
	env["WARDEN_PUBLIC_URL"] = "http://" + a.Addr().String()
	devServer(t, a, env)
	_, logsB := devServer(t, b, env)
	want := "http://" + a.Addr().String() + "/dev-idp"
	if got := announcedIssuer(t, a); got != want {
		t.Errorf("first process announces %q, want %q", got, want)
	}
	if got := announcedIssuer(t, b); got != want {
		t.Errorf("second process, listening on %s, announces %q, want the public URL's %q", b.Addr(), got, want)
	}
	if strings.Contains(logsB.String(), "issuer changed") {
		t.Errorf("one public URL logged an issuer change:\n%s", logsB)
	}
}

// Without WARDEN_PUBLIC_URL the public URL is the listen address, so a
// process on another address is another issuer: it says so when it
// starts in a data directory whose provider had another issuer.
func TestDevIssuerChangeIsLogged(t *testing.T) {
	env := testEnv(t, nil)
	a, b := listen(t), listen(t)
	devServer(t, a, env)
	_, logsB := devServer(t, b, env)
	issuerA, issuerB := announcedIssuer(t, a), announcedIssuer(t, b)
	if issuerA != "http://"+a.Addr().String()+"/dev-idp" || issuerB != "http://"+b.Addr().String()+"/dev-idp" {
		t.Errorf("issuers without a public URL = %q, %q; want each listen address", issuerA, issuerB)
	}
	logs := logsB.String()
	if !strings.Contains(logs, "issuer changed") || !strings.Contains(logs, issuerA) || !strings.Contains(logs, "WARDEN_PUBLIC_URL") {
		t.Errorf("the second process did not warn of the issuer change:\n%s", logs)
	}
}
