package execution

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// RetryReport says what RetryFailed did with each failed action.
type RetryReport struct {
	Retried []string // executing again under their own keys
	// Reconcile are actions whose effect may have reached the provider
	// (the ledger record is reserved): only reconciliation, asking by the
	// same key, may decide them.
	Reconcile []string
	// Skipped are actions the provider refused (a final ledger failure),
	// that the agent executes itself, or that the budget cannot cover.
	Skipped []string
}

// RetryFailed executes again, inside tx, the tenant's failed actions of
// tool whose effect never reached the provider: the ledger record is
// still intended, with no attempt. Each goes back to approved (with its
// action.retried event by actor), its cost is reserved again, the journey
// that waited for it waits again, and a new execution job is enqueued for
// it — under the action's own idempotency key, never a new one, so the
// provider cannot see it twice. batch names the retry (a runbook run) and
// makes the job unique to it. Nothing else is retried: see RetryReport.
func (s *Service) RetryFailed(ctx context.Context, tx *store.Tx, tenantID, tool, batch string, actor audit.Actor, reason string) (RetryReport, error) {
	var rep RetryReport
	ids, err := approvals.FailedIDs(ctx, tx, tenantID, tool)
	if err != nil || len(ids) == 0 {
		return rep, err
	}
	slug, err := tenants.SlugOf(ctx, tx, tenantID)
	if err != nil {
		return rep, err
	}
	t, err := s.tool(ctx, tx, tool)
	if err != nil {
		return rep, fmt.Errorf("tool %s: %w", tool, err)
	}
	reason = s.o.Redactor.String(reason)
	for _, id := range ids {
		a, err := approvals.Get(ctx, tx, id)
		if err != nil {
			return rep, err
		}
		if err := s.retryOne(ctx, tx, a, t, slug, batch, actor, reason, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// retryOne executes one failed action again if its effect never reached
// the provider, and says in rep what it did (see RetryFailed).
func (s *Service) retryOne(ctx context.Context, tx *store.Tx, a approvals.Action, t tools.Tool, slug, batch string, actor audit.Actor, reason string, rep *RetryReport) error {
	now := s.o.Now()
	if a.External {
		rep.Skipped = append(rep.Skipped, a.ID)
		return nil
	}
	e, err := ledger.Get(ctx, tx, a.IdempotencyKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rep.Skipped = append(rep.Skipped, a.ID)
		return nil
	case err != nil:
		return err
	case e.State == ledger.Reserved || e.State == ledger.Executed || (e.State == ledger.Intended && e.Attempts > 0):
		rep.Reconcile = append(rep.Reconcile, a.ID)
		return nil
	case e.State != ledger.Intended:
		rep.Skipped = append(rep.Skipped, a.ID) // failed: the provider refused it; recorded: reconciliation completes it
		return nil
	}
	if t.UnitCostMicros > 0 {
		if err := budgets.Reserve(ctx, tx, a.TenantID, t.UnitCostMicros, now); errors.Is(err, budgets.ErrExhausted) || errors.Is(err, budgets.ErrNoBudget) {
			rep.Skipped = append(rep.Skipped, a.ID)
			return nil
		} else if err != nil {
			return err
		}
		if err := approvals.Reserve(ctx, tx, a.ID, t.UnitCostMicros); err != nil {
			return err
		}
	}
	ok, err := approvals.Retry(ctx, tx, a, slug, actor, reason, now)
	if err != nil {
		return err
	}
	if !ok { // it was read failed in this write transaction
		return fmt.Errorf("retry %s: it is no longer failed", a.ID)
	}
	if err := journeys.WaitAgain(ctx, tx, a.JourneyID, a.StepN); err != nil {
		return err
	}
	if err := jobs.Enqueue(ctx, tx, JobExecuteAction, actionJob{ActionID: a.ID}, jobs.Options{UniqueKey: "exec:" + a.ID + ":retry:" + batch, Timeout: executionTimeout(t)}); err != nil {
		return err
	}
	rep.Retried = append(rep.Retried, a.ID)
	return nil
}
