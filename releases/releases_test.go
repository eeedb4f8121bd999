package releases

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

var sample = Bundle{
	Model: "openai:gpt-4o-2024-08-06", Prompt: "sha256:aaaa", Tools: "sha256:bbbb",
	Routing: "sha256:cccc", Approval: "sha256:dddd", Skills: "sha256:eeee",
}

var carol = Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-carol"}, Name: "Carol"}

func TestDigestIgnoresKeyOrder(t *testing.T) {
	a, _, err := Parse([]byte(`{"model":"openai:gpt-4o-2024-08-06","prompt":"sha256:aaaa","tools":"sha256:bbbb","routing":"sha256:cccc","approval":"sha256:dddd","skills":"sha256:eeee"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Parse([]byte(`{"skills":"sha256:eeee", "approval":"sha256:dddd", "routing":"sha256:cccc",
		"tools":"sha256:bbbb", "prompt":"sha256:aaaa", "model":"openai:gpt-4o-2024-08-06"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() || a.Digest() != sample.Digest() {
		t.Errorf("digests %s, %s, %s; want one digest whatever the key order", a.Digest(), b.Digest(), sample.Digest())
	}
	if len(a.Digest()) != len("sha256:")+64 || a.Digest()[:7] != "sha256:" {
		t.Errorf("digest %q, want sha256: and 64 hex digits", a.Digest())
	}
}

// withSurface is sample with one surface changed.
func withSurface(name, v string) Bundle {
	b := sample
	switch name {
	case "model":
		b.Model = v
	case "prompt":
		b.Prompt = v
	case "tools":
		b.Tools = v
	case "routing":
		b.Routing = v
	case "approval":
		b.Approval = v
	case "skills":
		b.Skills = v
	}
	return b
}

func TestEverySurfaceChangesTheDigestAndTheDiff(t *testing.T) {
	seen := map[string]string{sample.Digest(): "sample"}
	for _, s := range Surfaces {
		b := withSurface(s, "sha256:ffff")
		if prev, dup := seen[b.Digest()]; dup {
			t.Errorf("changing %s gives the digest of %s", s, prev)
		}
		seen[b.Digest()] = s
		if got := Diff(sample, b); !slices.Equal(got, []string{s}) {
			t.Errorf("Diff after changing %s = %q, want [%s]", s, got, s)
		}
	}
	two := withSurface("prompt", "sha256:1111")
	two.Routing = "sha256:2222"
	if got := Diff(sample, two); !slices.Equal(got, []string{"prompt", "routing"}) {
		t.Errorf("Diff = %q, want [prompt routing]", got)
	}
	if got := Diff(sample, sample); len(got) != 0 {
		t.Errorf("Diff of a bundle with itself = %q, want none", got)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"unknown surface": `{"model":"m","prompt":"p","tools":"t","routing":"r","approval":"a","skills":"s","temperature":"0.2"}`,
		"missing surface": `{"model":"m","prompt":"p","tools":"t","routing":"r","approval":"a"}`,
		"not an object":   `["m"]`,
		"bad identifier":  `{"model":"m x","prompt":"p","tools":"t","routing":"r","approval":"a","skills":"s"}`,
	} {
		if _, _, err := Parse([]byte(raw)); err == nil {
			t.Errorf("Parse(%s) accepted %s", name, raw)
		}
	}
}

func openDB(t *testing.T) *store.DB {
	t.Helper()
	return storetest.Open(t)
}

func verbs(t *testing.T, db *store.DB) []string {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Verb)
	}
	slices.Reverse(out)
	return out
}

func TestPublishActivateRollback(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	one, created, err := Publish(ctx, db, carol, sample, nil, "first")
	if err != nil || !created || one != sample.Digest() {
		t.Fatalf("Publish = %s, %v, %v; want %s created", one, created, err, sample.Digest())
	}
	if again, created, err := Publish(ctx, db, carol, sample, nil, "again"); err != nil || created || again != one {
		t.Errorf("Publish again = %s, %v, %v; want %s, not created", again, created, err, one)
	}
	twoB := withSurface("prompt", "sha256:9999")
	two, _, err := Publish(ctx, db, carol, twoB, nil, "second")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Active(ctx, db.Read(), DefaultAgent, DefaultEnv); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Active before any activation = %v, want ErrNotFound", err)
	}
	if _, changed, err := Activate(ctx, db, carol, DefaultAgent, DefaultEnv, one, ""); err != nil || !changed {
		t.Fatalf("Activate one = %v, %v", changed, err)
	}
	if _, changed, err := Activate(ctx, db, carol, DefaultAgent, DefaultEnv, two, "new prompt"); err != nil || !changed {
		t.Fatalf("Activate two = %v, %v", changed, err)
	}
	if _, _, err := Rollback(ctx, db, carol, DefaultAgent, DefaultEnv, one, "  "); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("Rollback without a reason = %v, want ErrReasonRequired", err)
	}
	third, _, _ := Publish(ctx, db, carol, withSurface("model", "other"), nil, "")
	if _, _, err := Rollback(ctx, db, carol, DefaultAgent, DefaultEnv, third, "never ran"); !errors.Is(err, ErrNotInHistory) {
		t.Errorf("Rollback to a release never active = %v, want ErrNotInHistory", err)
	}
	if p, _ := Active(ctx, db.Read(), DefaultAgent, DefaultEnv); p.Digest != two {
		t.Errorf("after refused rollbacks the active release is %s, want %s", p.Digest, two)
	}
	p, changed, err := Rollback(ctx, db, carol, DefaultAgent, DefaultEnv, one, "refunds doubled")
	if err != nil || !changed || p.Digest != one || p.Kind != KindRolledBack || p.Author != "Carol" || p.Reason != "refunds doubled" {
		t.Fatalf("Rollback = %+v, %v, %v", p, changed, err)
	}
	if _, changed, err := Rollback(ctx, db, carol, DefaultAgent, DefaultEnv, one, "pressed twice"); err != nil || changed {
		t.Errorf("second Rollback = %v, %v; want no change", changed, err)
	}
	if p, _ := Active(ctx, db.Read(), DefaultAgent, DefaultEnv); p.Digest != one {
		t.Errorf("active release %s, want %s", p.Digest, one)
	}
	h, err := History(ctx, db.Read(), DefaultAgent, DefaultEnv, store.Page{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range h.Rows {
		got = append(got, r.Kind+" "+r.Digest+" "+r.Reason)
	}
	want := []string{KindRolledBack + " " + one + " refunds doubled", KindActivated + " " + two + " new prompt", KindActivated + " " + one + " "}
	if !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	wantVerbs := []string{"release.published", "release.published", "release.activated", "release.activated", "release.published", "release.rolled_back"}
	if got := verbs(t, db); !slices.Equal(got, wantVerbs) {
		t.Errorf("audit verbs = %q, want %q", got, wantVerbs)
	}
}

func TestBundlesAndPointersCannotBeEdited(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	d, _, err := Publish(ctx, db, carol, sample, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Activate(ctx, db, carol, DefaultAgent, DefaultEnv, d, ""); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE release_bundles SET note = 'x'`, `DELETE FROM release_bundles`,
		`UPDATE release_pointers SET reason = 'x'`, `DELETE FROM release_pointers`,
	} {
		err := db.Transact(ctx, func(tx *store.Tx) error { _, err := tx.ExecContext(ctx, q); return err })
		if err == nil || !strings.Contains(err.Error(), "release") {
			t.Errorf("%s = %v, want refused by the table's trigger", q, err)
		}
	}
}

// BenchmarkActive is the read admission makes: the newest pointer row.
func BenchmarkActive(b *testing.B) {
	ctx := context.Background()
	db := storetest.Open(b)
	for i := range 200 {
		d, _, _ := Publish(ctx, db, carol, withSurface("prompt", fmt.Sprintf("p%d", i)), nil, "")
		if _, _, err := Activate(ctx, db, carol, DefaultAgent, DefaultEnv, d, ""); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := Active(ctx, db.Read(), DefaultAgent, DefaultEnv); err != nil {
			b.Fatal(err)
		}
	}
}
