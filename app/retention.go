package app

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
)

// PurgeTraces enforces each tenant's trace retention: journeys (and their
// step journals) and stored model responses (/v1/responses) older than
// the tenant's retention are deleted; it returns the journeys deleted. Journeys
// still awaiting approval are kept; audit events are never purged. Each
// tenant's purge that deleted something is itself an audit event.
func (rt *Runtime) PurgeTraces(ctx context.Context, now time.Time) (int64, error) {
	type tenant struct {
		id, slug string
		days     int
	}
	ts, err := store.Query(ctx, rt.DB.Read(), func(s store.Scanner) (tenant, error) {
		var t tenant
		err := s.Scan(&t.id, &t.slug, &t.days)
		return t, err
	}, `SELECT id, slug, trace_retention_days FROM tenants`)
	if err != nil {
		return 0, fmt.Errorf("retention: %w", err)
	}
	var total int64
	for _, t := range ts {
		cutoff := now.Add(-time.Duration(t.days) * 24 * time.Hour)
		var purged int64 // counted once committed: a retried run starts afresh (store.Transact)
		// Alone: a large purge must not hold up the commit of the
		// requests that group commit would batch with it.
		err := rt.DB.TransactAlone(ctx, func(tx *store.Tx) error {
			n, err := journeys.DeleteOlderThan(ctx, tx, t.id, cutoff)
			purged = n
			if err != nil {
				return err
			}
			r, err := models.DeleteResponsesOlderThan(ctx, tx, t.id, cutoff)
			if err != nil || n+r == 0 {
				return err
			}
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor: audit.Actor{Type: audit.ActorSystem, ID: "retention"}, Tenant: t.slug, Verb: "traces.purged",
				Subject: audit.Subject{Type: "tenant", ID: t.id},
				Details: map[string]any{"journeys": n, "responses": r, "older_than": store.FormatTime(cutoff), "retention_days": t.days},
			})
			return err
		})
		if err != nil {
			return total, err
		}
		total += purged
	}
	return total, nil
}

// retention purges traces past their tenants' retention (a periodic job).
func (rt *Runtime) retention(ctx context.Context) error {
	n, err := rt.PurgeTraces(ctx, time.Now())
	if n > 0 {
		rt.log.InfoContext(ctx, "trace retention purged old journeys", "journeys", n)
	}
	if err != nil {
		return fmt.Errorf("trace retention: %w", err)
	}
	return nil
}
