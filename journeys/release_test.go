package journeys

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/tools"
)

// A journey runs under the release active at its admission: a rollback
// while it runs changes the journeys admitted after, never it.
func TestJourneyKeepsTheReleaseItWasAdmittedUnder(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}
	publish := func(prompt string) string {
		t.Helper()
		d, _, err := releases.Publish(r.ctx, r.db, by, releases.Bundle{Model: "builtin:keyword-router", Prompt: prompt,
			Tools: "sha256:t", Routing: "sha256:r", Approval: "sha256:a", Skills: "sha256:s"}, nil, "")
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
			Tools: "sha256:t", Routing: "sha256:r", Approval: "sha256:a", Skills: "sha256:s"}, nil, "")
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

// A release's routing policy and skill set decide how its journeys are
// routed: a release without a skill routes nothing to it, a release with
// a higher threshold routes less, and rolling back restores the routing
// of the release rolled back to.
func TestRoutingFollowsTheRelease(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}
	publish := func(threshold float64, skills []string) string {
		t.Helper()
		contents, err := releases.ContentsOf(map[string]any{
			"routing": releases.RoutingPolicy{Router: "keyword", Threshold: threshold},
			"skills":  skills,
		})
		if err != nil {
			t.Fatal(err)
		}
		b := releases.Bundle{Model: "builtin:keyword-router", Prompt: "sha256:p", Tools: "sha256:t", Approval: "sha256:a"}
		b.Routing, _ = releases.ContentID(contents["routing"])
		b.Skills, _ = releases.ContentID(contents["skills"])
		d, _, err := releases.Publish(r.ctx, r.db, by, b, contents, "")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	all := r.svc.o.Router.Names()
	full := publish(0.40, all)
	noStatus := publish(0.40, []string{"refunds", "order_support", "customer_email"})
	strict := publish(0.90, all)

	routeUnder := func(d, input string) (string, error) {
		t.Helper()
		if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, d, ""); err != nil {
			t.Fatal(err)
		}
		out, err := r.run(input)
		if err != nil {
			var je *JourneyError
			if errors.As(err, &je) && je.Journey.Skill != "" {
				return je.Journey.Skill, nil // routed, then refused later
			}
			if errors.As(err, &je) {
				return je.Problem.Code, nil
			}
			return "", err
		}
		return out.Journey.Skill, nil
	}
	const status, email = "Where is my order ORD-1003?", "Email the customer of ORD-1001 about the delay" // scores 1 and about 0.85
	for _, tc := range []struct {
		release, input, want string
	}{
		{full, status, "order_status"},
		{full, email, "customer_email"},
		{noStatus, status, CodeNoRoute},
		{strict, status, "order_status"},
		{strict, email, CodeNoRoute},
		{full, email, "customer_email"}, // rolled forward again: routed as before
	} {
		got, err := routeUnder(tc.release, tc.input)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("under release %s %q went to %q, want %q", tc.release, tc.input, got, tc.want)
		}
	}
	// An explicit hint cannot reach a skill the release leaves out.
	if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, noStatus, ""); err != nil {
		t.Fatal(err)
	}
	_, err := r.svc.Run(r.ctx, Request{Caller: r.caller, Input: "Where is my order ORD-1003?", Skill: "order_status", RequestID: "req-2"})
	var je *JourneyError
	if !errors.As(err, &je) || je.Problem.Code != CodeNoRoute {
		t.Errorf("hinted order_status under a release without it: %v, want %s", err, CodeNoRoute)
	}
}
