package approvals

import (
	"context"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// waitPoll is how often Wait reads the action again. A decision is made
// by another request, possibly on another replica, so there is nothing
// to be told; reading a row by its key ten times a second is cheap.
const waitPoll = 100 * time.Millisecond

// Wait reads action id until it leaves pending (decided, cancelled or
// expired) or until passes, and returns it as last read: still pending
// at the deadline, or as soon as it has left pending. An action that has
// already left pending, or an until already past, returns after one read.
// When ctx ends first the answer is ctx's error; an action that is gone
// (retention) is store.ErrNotFound. The wait is a span of the agent's
// trace (tracing.go).
func Wait(ctx context.Context, q store.Querier, id string, until time.Time) (Action, error) {
	ctx, span := startWait(ctx, id, until)
	a, err := wait(ctx, q, id, until)
	endWait(span, a, err)
	return a, err
}

func wait(ctx context.Context, q store.Querier, id string, until time.Time) (Action, error) {
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	deadline := time.NewTimer(time.Until(until))
	defer deadline.Stop()
	for {
		a, err := Get(ctx, q, id)
		if err != nil {
			if ctx.Err() != nil {
				return Action{}, ctx.Err()
			}
			return Action{}, err
		}
		if a.Status != StatusPending || !time.Now().Before(until) {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return Action{}, ctx.Err()
		case <-tick.C:
		case <-deadline.C: // one last read, at the deadline
		}
	}
}
