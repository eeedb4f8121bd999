package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/wardenhq/warden/platform/store"
)

// DefaultReadyTimeout bounds /readyz's database check. Load balancers give
// a health check 1 to 5 s; a database that does not answer within this
// is reported unavailable before the balancer's own timeout decides.
const DefaultReadyTimeout = time.Second

// readiness is /readyz's database check, bounded whatever the driver does
// with the deadline: the check runs in a flight of its own, and a probe
// answers at its bound even if the flight is still waiting (a new probe
// then joins that flight instead of starting another, so a database that
// stalls does not collect one goroutine per probe).
type readiness struct {
	timeout time.Duration
	check   func(context.Context) error // store.DB.Ready; tests stall it
	flight  singleflight.Group
}

// database runs the check and returns, when it failed, the check's name
// for the JSON body ("database", "migrations", "writes") and a sentence.
func (r *readiness) database(ctx context.Context) (failed, detail string, err error) {
	ch := r.flight.DoChan("ready", func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
		defer cancel()
		return nil, r.check(fctx)
	})
	t := time.NewTimer(r.timeout)
	defer t.Stop()
	select {
	case res := <-ch:
		err = res.Err
	case <-t.C:
		err = fmt.Errorf("%w: no answer within %s: %w", store.ErrNotReachable, r.timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		err = fmt.Errorf("%w: %w", store.ErrNotReachable, ctx.Err())
	}
	switch {
	case err == nil:
		return "", "", nil
	case errors.Is(err, store.ErrMigrationsPending):
		return "migrations", "Migrations this version needs are not applied yet.", err
	case errors.Is(err, store.ErrNotWritable):
		return "writes", "The last write failed for storage reasons and a probe write still fails.", err
	case errors.Is(err, context.DeadlineExceeded):
		return "database", fmt.Sprintf("The database did not answer within %s.", r.timeout), err
	default:
		return "database", "The database cannot be reached.", err
	}
}
