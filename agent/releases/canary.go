package releases

import "math"

// CanaryResult is what a canary's journeys did.
type CanaryResult struct {
	Trials           int // journeys that ran under the canary
	Successes        int
	CriticalFailures int // a policy breach, a wrong effect: any one stops promotion
}

// Gate says whether a canary may be promoted.
type Gate struct {
	Promote    bool
	LowerBound float64 // Wilson score lower bound of the success rate, 95 %
}

// z95 is the two-sided 95 % normal quantile.
const z95 = 1.96

// CanaryGate decides promotion: the Wilson score lower bound (95 %) of
// the success rate must reach floor, and no journey may have failed
// critically. The lower bound, not the observed rate, so that few trials
// cannot promote: 24 of 25 is 96 % observed but only ≈ 0.805 assured.
func CanaryGate(r CanaryResult, floor float64) Gate {
	lb := WilsonLower(r.Successes, r.Trials, z95)
	return Gate{Promote: r.CriticalFailures == 0 && r.Trials > 0 && lb >= floor, LowerBound: lb}
}

// WilsonLower is the Wilson score interval's lower bound for successes
// out of trials at normal quantile z; 0 without trials.
func WilsonLower(successes, trials int, z float64) float64 {
	if trials <= 0 {
		return 0
	}
	n := float64(trials)
	p := float64(successes) / n
	z2 := z * z
	centre := p + z2/(2*n)
	margin := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return (centre - margin) / (1 + z2/n)
}
