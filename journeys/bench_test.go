package journeys

import (
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/releases"
)

// BenchmarkJourney measures one whole journey that completes without
// approval (admission, routing, one low-impact tool call, settlement):
// the path every agent request takes, including resolving its release.
// Besides the time it reports cpu-µs/op, the process's CPU time per
// journey (user and system, the simulated shop's database included),
// which a machine shared with other work moves less than the time.
func BenchmarkJourney(b *testing.B) {
	r := newRig(b)
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		out, err := r.run("Where is my order ORD-1003?")
		if err != nil {
			b.Fatal(err)
		}
		if out.Journey.Status != StatusCompleted {
			b.Fatalf("journey %s", out.Journey.Status)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkJourneyActiveRelease is BenchmarkJourney with a release
// activated, so admission finds the pointer row it reads.
func BenchmarkJourneyActiveRelease(b *testing.B) {
	r := newRig(b)
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorSystem, ID: "bench"}, Name: "bench"}
	d, _, err := releases.Publish(r.ctx, r.db, by, releases.Bundle{Model: "m", Prompt: "p", Tools: "t", Routing: "r", Approval: "a", Skills: "s"}, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, d, ""); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		out, err := r.run("Where is my order ORD-1003?")
		if err != nil {
			b.Fatal(err)
		}
		if out.Journey.Release != d {
			b.Fatalf("journey release %s, want %s", out.Journey.Release, d)
		}
	}
}
