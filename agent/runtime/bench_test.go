package runtime

import (
	"testing"
)

// BenchmarkJourney measures one whole journey that completes without
// approval (admission, routing, one low-impact tool call, settlement):
// the path every agent request takes, including resolving its release.
func BenchmarkJourney(b *testing.B) {
	r := newRig(b)
	r.caller.Key.RatePerMin = 1 << 30
	b.ResetTimer()
	for b.Loop() {
		out, err := r.run("Where is my order ORD-1003?")
		if err != nil {
			b.Fatal(err)
		}
		if out.Journey.Status != StatusCompleted {
			b.Fatalf("journey %s", out.Journey.Status)
		}
	}
}
