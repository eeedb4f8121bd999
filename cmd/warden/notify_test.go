package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
)

// warden notify test CHANNEL sends the channel a test message now: exit
// 0 when it is accepted, 1 with the reason (no secret) when not, 2 for a
// channel that does not exist.
func TestNotifyTestCommand(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	status := http.StatusOK
	var bodies []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(bytes.Buffer)
		b.ReadFrom(r.Body)
		bodies = append(bodies, b.String())
		w.WriteHeader(status)
	}))
	defer rcv.Close()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	svc := notify.New(notify.Options{DB: db, Sealer: sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), AllowInternal: true})
	if _, err := svc.SaveChannel(ctx, audit.Actor{Type: audit.ActorSystem, ID: "test"}, "", notify.Input{Name: "ops", Kind: notify.Teams,
		Secret: notify.Secret{URL: rcv.URL + "/workflows/secretpath77"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := envMap(map[string]string{"WARDEN_DATA_DIR": dir, "WARDEN_PUBLIC_URL": "https://warden.example.com"})

	var out, errb bytes.Buffer
	if code := run(ctx, []string{"notify", "test", "ops"}, env, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "ops accepted the test message msg_") {
		t.Fatalf("notify test = %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if len(bodies) != 1 || !strings.Contains(bodies[0], "AdaptiveCard") || !strings.Contains(bodies[0], "https://warden.example.com/notifications") {
		t.Errorf("the receiver got %q", bodies)
	}
	status = http.StatusForbidden
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"notify", "test", "ops"}, env, &out, &errb); code != 1 || !strings.Contains(errb.String(), "403") || strings.Contains(errb.String(), "secretpath77") {
		t.Errorf("refused test = %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(ctx, []string{"notify", "test", "nope"}, env, &out, &errb); code != 2 || !strings.Contains(errb.String(), `no channel "nope"`) {
		t.Errorf("unknown channel = %d, stderr %q", code, errb.String())
	}
	if code := run(ctx, []string{"notify"}, env, &out, &errb); code != 2 {
		t.Errorf("notify without test = %d, want 2", code)
	}
}
