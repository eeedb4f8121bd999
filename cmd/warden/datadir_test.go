package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A real warden serve refuses, with exit code 2 and the sentence naming
// WARDEN_DATA_DIR and the mode, a data directory or key file that group
// and others can write to; once chmod'ed as the sentence says, it starts.
func TestServeRefusesADataDirOthersCanWrite(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "sealing.key")
	if err := os.WriteFile(key, make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := func(path, mode, fix string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "serve")
		cmd.Env = append(os.Environ(), "WARDEN_TEST_CHILD=1", "WARDEN_ADDR=127.0.0.1:0", "WARDEN_DATA_DIR="+dir)
		var errb strings.Builder
		cmd.Stderr = &errb
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("warden serve with %s at mode %s did not exit:\n%s", path, mode, errb.String())
		}
		var ee *exec.ExitError
		want := "WARDEN_DATA_DIR: " + path + " is mode " + mode + ": group and others can write to it; run chmod " + fix + " " + path
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(errb.String(), want) {
			t.Errorf("warden serve with %s at mode %s = %v, stderr:\n%s\nwant exit 2 and %q", path, mode, err, errb.String(), want)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	refused(dir, "0777", "700")
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(key, 0o666); err != nil {
		t.Fatal(err)
	}
	refused(key, "0666", "600")
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, dir)
	p.stop(t)
}
