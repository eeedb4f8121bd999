package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcessStartsWithDefaultsAndDrainsOnSIGTERM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := startProcess(t, dir, "WARDEN_DRAIN_DELAY=1500ms")
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	waitFor(t, "readiness", func() bool {
		resp, err := client.Get(p.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// The data directory and its secrets are private.
	for name, want := range map[string]os.FileMode{"": 0o700, "warden.db": 0o600, "session.keys": 0o600, "redaction.key": 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode = %o, want %o", filepath.Join(dir, name), st.Mode().Perm(), want)
		}
	}

	p.cmd.Process.Signal(syscall.SIGTERM)
	saw503 := false
	waitFor(t, "the listener to close", func() bool {
		resp, err := client.Get(p.URL + "/readyz")
		if err != nil {
			return true
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			saw503 = true
		}
		return false
	})
	if !saw503 {
		t.Error("readiness never reported 503 before the listener closed")
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	logs := p.logs.String()
	for _, want := range []string{"shutting down", "shutdown complete"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}
