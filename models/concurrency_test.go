package models

import "testing"

// TestConcurrencyIsSharedAmongReplicas: a deployment's concurrency limit
// holds for the installation, not per replica: with N replicas alive each
// takes ceil(limit/N) calls at once (at least one), so together they run
// at most limit + N - 1.
func TestConcurrencyIsSharedAmongReplicas(t *testing.T) {
	for _, c := range []struct{ limit, replicas, want int }{
		{4, 1, 4},
		{4, 2, 2},
		{4, 3, 2},
		{1, 2, 1},
		{10, 4, 3},
	} {
		g := &Gateway{slots: map[string]chan struct{}{}, limits: newLimiter()}
		g.SetReplicas(func() int { return c.replicas })
		d := Deployment{ID: "dep", Concurrency: c.limit}
		var releases []func()
		for {
			release, ok := g.acquire(d)
			if !ok {
				break
			}
			releases = append(releases, release)
		}
		if len(releases) != c.want {
			t.Errorf("limit %d, %d replicas: this replica took %d calls at once, want %d", c.limit, c.replicas, len(releases), c.want)
		}
		releases[0]()
		if _, ok := g.acquire(d); !ok {
			t.Errorf("limit %d, %d replicas: a released slot was not taken again", c.limit, c.replicas)
		}
	}
}
