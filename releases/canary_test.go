package releases

import (
	"math"
	"testing"
)

func TestCanaryGate(t *testing.T) {
	tests := []struct {
		name    string
		r       CanaryResult
		floor   float64
		promote bool
		lower   float64
	}{
		{"98 of 100 clears 0.90", CanaryResult{Trials: 100, Successes: 98}, 0.90, true, 0.930},
		{"24 of 25 is too few to clear 0.90", CanaryResult{Trials: 25, Successes: 24}, 0.90, false, 0.805},
		{"one critical failure holds a perfect run", CanaryResult{Trials: 100, Successes: 100, CriticalFailures: 1}, 0.90, false, 0.963},
		{"no trials hold", CanaryResult{}, 0.90, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := CanaryGate(tt.r, tt.floor)
			if g.Promote != tt.promote {
				t.Errorf("CanaryGate(%+v, %.2f).Promote = %v, want %v", tt.r, tt.floor, g.Promote, tt.promote)
			}
			if math.Abs(g.LowerBound-tt.lower) > 0.0005 {
				t.Errorf("CanaryGate(%+v, %.2f).LowerBound = %.4f, want ≈ %.3f", tt.r, tt.floor, g.LowerBound, tt.lower)
			}
		})
	}
}
