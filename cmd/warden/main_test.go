package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/wait"
)

// TestMain lets the test binary act as the warden binary: a child process
// started with WARDEN_TEST_CHILD=1 runs main's code for real.
func TestMain(m *testing.M) {
	if os.Getenv("WARDEN_TEST_CHILD") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestBadConfigurationRefusesToStart(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"serve"}, envMap(map[string]string{
		"WARDEN_DATA_DIR":       t.TempDir(),
		"WARDEN_ADDR":           "0.0.0.0:8080",
		"WARDEN_SHUTDOWN_GRACE": "later",
	}), &out, &errb)
	if code == 0 {
		t.Fatal("warden started with bad settings")
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "WARDEN_ADDR") || !strings.Contains(lines[2], "WARDEN_SHUTDOWN_GRACE") {
		t.Errorf("stderr =\n%s\nwant a heading and one line each for WARDEN_ADDR and WARDEN_SHUTDOWN_GRACE", errb.String())
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run(t.Context(), []string{"version"}, envMap(nil), &out, io.Discard); code != 0 || out.String() != "warden "+version+"\n" {
		t.Errorf("warden version = %d %q", code, out.String())
	}
	if code := run(t.Context(), []string{"frobnicate"}, envMap(nil), io.Discard, io.Discard); code != 2 {
		t.Errorf("unknown command exit = %d, want 2", code)
	}
}

// process is a real warden process started from this test binary.
type process struct {
	URL  string
	keyc chan string // the development-mode key printed at start-up
	cmd  *exec.Cmd
	logs *logBuffer
	done chan error
}

var (
	listeningRe = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	demoKeyRe   = regexp.MustCompile(`wk_[a-z0-9]+_[a-z0-9]+`)
)

// startProcess starts warden serve on a random loopback port with a fresh
// data directory (or the given one) and waits until it listens.
func startProcess(t *testing.T, dataDir string, extraEnv ...string) *process {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), "WARDEN_TEST_CHILD=1", "WARDEN_ADDR=127.0.0.1:0", "WARDEN_DATA_DIR="+dataDir)
	cmd.Env = append(cmd.Env, extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: &logBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	keyc := make(chan string, 1)
	p.keyc = keyc
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := demoKeyRe.FindString(sc.Text()); m != "" {
				keyc <- m
			}
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.URL = <-urlc:
	case err := <-p.done:
		t.Fatalf("warden exited before listening: %v\n%s", err, p.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("warden did not start listening:\n%s", p.logs)
	}
	return p
}

// demoKey returns the demo virtual key the process printed at start-up.
func (p *process) demoKey(t *testing.T) string {
	t.Helper()
	select {
	case k := <-p.keyc:
		p.keyc <- k
		return k
	case <-time.After(10 * time.Second):
		t.Fatalf("warden printed no demo key:\n%s", p.logs)
		return ""
	}
}

// logBuffer is the child's stderr, written by exec's copier and read by
// the test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (p *process) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("warden exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("warden did not exit after SIGTERM")
	}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	wait.Until(t, 20*time.Second, what, f)
}
