package app

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
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

// The demo's routes carry labels, so Labelling and the Releases page's
// route accuracy are not empty in a fresh console: of the six labelled
// journeys three went to the right skill, two belonged to another skill
// and one should have been refused (50 %, the Releases page's total); the
// day's queue still proposes the order-support journey nobody labelled.
func TestSeedDemoLabels(t *testing.T) {
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
	// What the Releases page counts: the agent's labels.
	labels, err := routelabels.Of(ctx, db.Read(), releases.DefaultAgent, releases.DefaultEnv, 0)
	if err != nil {
		t.Fatal(err)
	}
	st := routelabels.Accuracy(labels)
	if st.Labelled != 6 || st.Right != 3 || st.Percent() != 50 {
		t.Errorf("demo route accuracy %d of %d (%d %%), want 3 of 6 (50 %%)", st.Right, st.Labelled, st.Percent())
	}
	wantWrong := []routelabels.Cell{{Routed: "order_status", Expected: ""}, {Routed: "order_status", Expected: "order_support"}, {Routed: "order_status", Expected: "refunds"}}
	if len(st.Confusion) != len(wantWrong) {
		t.Fatalf("demo wrong routes %+v, want %+v", st.Confusion, wantWrong)
	}
	for i, c := range st.Confusion {
		if w := wantWrong[i]; c.Routed != w.Routed || c.Expected != w.Expected || c.N != 1 {
			t.Errorf("wrong route %d = %+v, want %+v once", i, c, w)
		}
	}
	active, err := releases.Active(ctx, db.Read(), releases.DefaultAgent, releases.DefaultEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Releases) != 1 || st.Releases[0].Release != active.Digest || st.Releases[0].Labelled != 6 {
		t.Errorf("demo accuracy per release %+v, want 6 labels of the active %s", st.Releases, active.Digest)
	}
	for _, l := range labels {
		if l.By != "demo seed" {
			t.Errorf("journey %s labelled by %q, want the demo seed", l.ID, l.By)
		}
	}
	var events int
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events WHERE verb = 'route.labelled' AND actor_type = ? AND actor_id = 'demo-seed'`,
		audit.ActorSystem).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if events != 6 {
		t.Errorf("%d route.labelled events by the demo seed, want 6", events)
	}

	// Today's queue at the default sample: the order-status journeys are
	// all labelled; the order-support one waits.
	q, err := journeys.LabelQueueOf(ctx, db.Read(), labels[0].At, routelabels.DefaultSettings().SamplePercent, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if q.Sampled != 2 || q.Done != 1 || len(q.Items) != 1 || q.Items[0].Skill != "order_support" {
		t.Errorf("demo label queue: %d of %d labelled, items %+v; want 1 of 2 with the order_support journey left", q.Done, q.Sampled, q.Items)
	}
}
