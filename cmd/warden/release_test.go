package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
)

func TestReleasePublishCommand(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := envMap(map[string]string{"WARDEN_DATA_DIR": dir})
	file := filepath.Join(dir, "bundle.json")
	body := `{"skills":"sha256:s","model":"openai:gpt-4o-mini-2024-07-18","prompt":"sha256:p","tools":"sha256:t","routing":"sha256:r","approval":"sha256:a"}`
	os.WriteFile(file, []byte(body), 0o600)
	want, _, _ := releases.Parse([]byte(body))

	var out, errb bytes.Buffer
	if code := run(ctx, []string{"release", "publish", file, "--agent", "billing", "--env", "staging", "--activate", "--note", "first"}, env, &out, &errb); code != 0 {
		t.Fatalf("release publish = %d: %s", code, errb.String())
	}
	if got := strings.TrimSpace(out.String()); got != want.Digest() {
		t.Errorf("printed %q, want the digest %s", got, want.Digest())
	}
	db, err = store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if p, err := releases.Active(ctx, db.Read(), "billing", "staging"); err != nil || p.Digest != want.Digest() || p.Reason != "first" {
		t.Errorf("active release %+v, %v; want %s with note first", p, err, want.Digest())
	}

	os.WriteFile(file, []byte(`{"model":"m","prompt":"p"}`), 0o600)
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"release", "publish", file}, env, &out, &errb); code != 2 || !strings.Contains(errb.String(), "tools") || out.Len() != 0 {
		t.Errorf("incomplete bundle = %d, stdout %q, stderr %q; want 2 naming the missing surfaces", code, out.String(), errb.String())
	}
}
