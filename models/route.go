package models

import (
	"math"
	"math/rand/v2"
	"slices"
)

// weighted orders deployments (already in priority order) for one call:
// among deployments of equal priority, each comes first in proportion to
// its weight (a weighted shuffle); priorities keep their order.
func weighted(deps []Deployment) []Deployment {
	out := slices.Clone(deps)
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Priority == out[i].Priority {
			j++
		}
		if j-i > 1 {
			group := out[i:j]
			keys := make(map[string]float64, len(group))
			for _, d := range group {
				// Efraimidis–Spirakis: sorting by u^(1/w) descending draws
				// without replacement in proportion to the weights.
				keys[d.ID] = math.Pow(rand.Float64(), 1/float64(max(1, d.Weight)))
			}
			slices.SortStableFunc(group, func(a, b Deployment) int {
				switch ka, kb := keys[a.ID], keys[b.ID]; {
				case ka > kb:
					return -1
				case ka < kb:
					return 1
				}
				return 0
			})
		}
		i = j
	}
	return out
}

// cheapestFirst orders deployments for a cascade: by worst, this call's
// worst-case cost at each one's prices, priority breaking ties.
func cheapestFirst(deps []Deployment, worst func(Deployment) int64) []Deployment {
	out := slices.Clone(deps)
	slices.SortStableFunc(out, func(a, b Deployment) int {
		ca, cb := worst(a), worst(b)
		switch {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
	return out
}

// outputLimit is the output cap Warden sends d for a call that asked for
// asked tokens (0: none asked).
func outputLimit(d Deployment, asked int64) int64 {
	if asked > 0 {
		return min(asked, int64(d.MaxOutputTokens))
	}
	return int64(d.MaxOutputTokens)
}
