package runtime

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/agent/releases"
	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/audit"
)

// A journey runs under the release active at its admission: a rollback
// while it runs changes the journeys admitted after, never it.
func TestJourneyKeepsTheReleaseItWasAdmittedUnder(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}
	publish := func(prompt string) string {
		t.Helper()
		d, _, err := releases.Publish(r.ctx, r.db, by, releases.Bundle{Model: "builtin:keyword-router", Prompt: prompt,
			Tools: "sha256:t", Routing: "sha256:r", Approval: "sha256:a", Skills: "sha256:s"}, "")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	old, cur := publish("sha256:old"), publish("sha256:new")

	if out, err := r.run("Where is my order ORD-1003?"); err != nil || out.Journey.Release != DefaultRelease {
		t.Fatalf("with no pointer the journey ran under %q (%v), want the fallback %s", out.Journey.Release, err, DefaultRelease)
	}
	for _, d := range []string{old, cur} {
		if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, d, ""); err != nil {
			t.Fatal(err)
		}
	}

	// The first journey stops in its tool call until the rollback is done.
	entered, release := make(chan struct{}), make(chan struct{})
	r.hooks.set(func(ctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		close(entered)
		<-release
		r.hooks.set(nil)
		return next()
	})
	type result struct {
		out Outcome
		err error
	}
	first := make(chan result, 1)
	go func() { out, err := r.run("Where is my order ORD-1003?"); first <- result{out, err} }()
	<-entered
	if _, changed, err := releases.Rollback(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, old, "new prompt misroutes"); err != nil || !changed {
		t.Fatalf("Rollback = %v, %v", changed, err)
	}
	close(release)
	before := <-first
	if before.err != nil {
		t.Fatal(before.err)
	}
	after, err := r.run("Where is my order ORD-1003?")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.journey(before.out.Journey.ID).Release; got != cur || before.out.Journey.Release != cur {
		t.Errorf("journey admitted before the rollback recorded %s (answered %s), want %s", got, before.out.Journey.Release, cur)
	}
	if got := r.journey(after.Journey.ID).Release; got != old || after.Journey.Release != old {
		t.Errorf("journey admitted after the rollback recorded %s (answered %s), want %s", got, after.Journey.Release, old)
	}
	if got, _ := r.svc.Release(r.ctx); got != old {
		t.Errorf("Release() = %s, want %s", got, old)
	}
}

// While a canary runs, each journey's id decides its side, and the
// journey records the digest it ran under.
func TestCanaryAssignsJourneysByID(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}
	publish := func(prompt string) string {
		t.Helper()
		d, _, err := releases.Publish(r.ctx, r.db, by, releases.Bundle{Model: "builtin:keyword-router", Prompt: prompt,
			Tools: "sha256:t", Routing: "sha256:r", Approval: "sha256:a", Skills: "sha256:s"}, "")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	active, cand := publish("sha256:old"), publish("sha256:new")
	if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, active, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := releases.StartCanary(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, cand, 50, 0, ""); err != nil {
		t.Fatal(err)
	}
	sides := map[string]int{}
	for range 12 {
		out, err := r.run("Where is my order ORD-1003?")
		if err != nil {
			t.Fatal(err)
		}
		want := active
		if releases.InCanary(out.Journey.ID, 50) {
			want = cand
		}
		if got := r.journey(out.Journey.ID).Release; got != want || out.Journey.Release != want {
			t.Errorf("journey %s recorded %s (answered %s), want %s", out.Journey.ID, got, out.Journey.Release, want)
		}
		sides[want]++
	}
	if got, _ := r.svc.Release(r.ctx); got != active {
		t.Errorf("Release() = %s during a canary, want the active %s", got, active)
	}
	if _, _, err := releases.StopCanary(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, cand, "enough"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		out, err := r.run("Where is my order ORD-1003?")
		if err != nil {
			t.Fatal(err)
		}
		if out.Journey.Release != active {
			t.Errorf("after the canary was rolled back a journey ran under %s, want %s", out.Journey.Release, active)
		}
	}
	if sides[cand] == 0 || sides[active] == 0 {
		t.Errorf("sides over 12 journeys at share 50: %v, want both", sides)
	}
}
