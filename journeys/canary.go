package journeys

import (
	"context"

	"github.com/wardenhq/warden/releases"
)

// CheckCanary applies the canary gate to the canary of the runtime's agent
// in its environment, rolling it back on a critical failure
// (releases.CheckCanary); releases.ErrNoCanary when none runs.
func (s *Service) CheckCanary(ctx context.Context) (releases.Verdict, bool, error) {
	return releases.CheckCanary(ctx, s.o.DB, s.o.Agent, s.o.Env)
}
