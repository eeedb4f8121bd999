package app

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/releases"
)

// The demo agent has an earlier release and an active one that differ in
// prompt, routing and skill set, and the demo journeys ran under the active one.
func TestSeedDemoReleases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t)
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := releases.History(ctx, db.Read(), releases.DefaultAgent, releases.DefaultEnv, store.Page{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Rows) != 2 {
		t.Fatalf("demo history has %d rows, want 2", len(h.Rows))
	}
	active, earlier := h.Rows[0], h.Rows[1]
	a, _ := releases.Get(ctx, db.Read(), active.Digest)
	e, _ := releases.Get(ctx, db.Read(), earlier.Digest)
	if got := releases.Diff(e.Bundle, a.Bundle); !slices.Equal(got, []string{"prompt", "routing", "skills"}) {
		t.Errorf("demo releases differ in %q, want [prompt routing skills]", got)
	}
	var others int
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM journeys WHERE release_digest <> ?`, active.Digest).Scan(&others); err != nil {
		t.Fatal(err)
	}
	if others != 0 {
		t.Errorf("%d demo journeys ran under another release than the active %s", others, active.Digest)
	}
	if got, _ := rt.Journeys.Release(ctx); got != active.Digest {
		t.Errorf("runtime release %s, want the active %s", got, active.Digest)
	}
}

// The built-in release is stored at start, without an audit event, and
// journeys run under it while no release was activated.
func TestBuiltinReleaseAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t)
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	d, err := rt.Journeys.Release(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := releases.Get(ctx, db.Read(), d)
	if err != nil || b.Bundle.Digest() != d || b.Bundle.Model != "builtin:keyword-router" {
		t.Errorf("runtime release %s: stored %+v, %v; want the built-in bundle", d, b, err)
	}
	var events int
	db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events`).Scan(&events)
	if events != 0 {
		t.Errorf("%d audit events at start, want none", events)
	}
}
