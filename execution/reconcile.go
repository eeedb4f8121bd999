package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/tools"
)

// reconcileGrace is how long an effect (or an action executing) must
// have been left alone before the reconciler takes it for one a crash
// left: with the reconciler's 30 s period, an action a dead replica was
// executing is finished within about a minute (docs/deploy.md).
const reconcileGrace = 30 * time.Second

// Reconcile asks the providers about effects a crash left RESERVED, by
// their original keys, and finishes the actions whose effects turn out
// recorded — and the actions still executing whose effect the ledger
// recorded before their replica died (Report.Completed), without waiting
// for their job to run again.
func (s *Service) Reconcile(ctx context.Context) (ledger.Report, error) {
	rep, err := ledger.Reconcile(ctx, s.o.DB, s.resolve, ledger.ReconcileOptions{Grace: reconcileGrace})
	for _, key := range append(append([]string{}, rep.Recorded...), rep.Reexecuted...) {
		if cerr := s.CompleteFromLedger(ctx, key); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	stale, lerr := approvals.Executing(ctx, s.o.DB.Read(), s.o.Now().Add(-reconcileGrace), 100)
	err = errors.Join(err, lerr)
	for _, a := range stale {
		e, gerr := ledger.Get(ctx, s.o.DB.Read(), a.IdempotencyKey)
		if gerr != nil || e.State != ledger.Recorded || e.ActionID != a.ID {
			continue // not recorded: its job (or the reconcile above) decides
		}
		// Executed is a compare-and-set: a job finishing it meanwhile makes
		// this a no-op, and the action is executed, audited, once.
		if cerr := s.CompleteFromLedger(ctx, e.Key); cerr != nil {
			err = errors.Join(err, cerr)
			continue
		}
		rep.Completed = append(rep.Completed, e.Key)
	}
	for _, key := range rep.Failed {
		if e, gerr := ledger.Get(ctx, s.o.DB.Read(), key); gerr == nil && e.ActionID != "" {
			if a, aerr := approvals.Get(ctx, s.o.DB.Read(), e.ActionID); aerr == nil {
				err = errors.Join(err, s.fail(ctx, a, s.o.Redactor.String(e.Error)))
			}
		}
	}
	return rep, err
}

// resolve finds a ledger record's original call: the action's sealed
// arguments, its tool and provider.
func (s *Service) resolve(ctx context.Context, e ledger.Entry) (ledger.Resolved, error) {
	if e.ActionID == "" {
		return ledger.Resolved{}, errors.New("record names no action")
	}
	a, err := approvals.Get(ctx, s.o.DB.Read(), e.ActionID)
	if err != nil {
		return ledger.Resolved{}, err
	}
	args, err := approvals.OpenArgs(ctx, s.o.DB.Read(), s.o.Sealer, a.ID)
	if err != nil {
		return ledger.Resolved{}, err
	}
	t, err := s.tool(ctx, s.o.DB.Read(), a.Tool)
	if err != nil {
		return ledger.Resolved{}, err
	}
	if !t.Enabled {
		return ledger.Resolved{}, fmt.Errorf("tool %s is switched off", t.Name)
	}
	digest, err := approvals.PayloadDigest(t.Name, args)
	if err != nil {
		return ledger.Resolved{}, err
	}
	p := s.o.Providers[t.Provider]
	if p == nil {
		return ledger.Resolved{}, fmt.Errorf("no provider %q", t.Provider)
	}
	return ledger.Resolved{Tool: t, Provider: p, Digest: digest,
		Call: tools.Call{Tool: t.Name, Args: args, IdempotencyKey: a.IdempotencyKey, Tenant: e.Tenant}}, nil
}

// ExpireActions expires pending actions past their expiry whose own
// expiry job has not run (late, or the action is older than the job).
func (s *Service) ExpireActions(ctx context.Context) (int, error) {
	n, err := approvals.Expire(ctx, s.o.DB, s.onDecided, s.o.Now())
	if n > 0 {
		s.notify()
	}
	return n, err
}

// HandleExpire runs approvals.JobExpire, the job each pending action
// gets at its creation: the action expires if it is still
// pending (an approver's decision in the meantime makes it a no-op). A
// job that runs before the expiry on this replica's clock retries.
func (s *Service) HandleExpire(ctx context.Context, j jobs.Job) error {
	var p approvals.ExpireJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return &jobs.Permanent{Err: err}
	}
	expired, err := approvals.ExpireDue(ctx, s.o.DB, p.ActionID, s.onDecided, s.o.Now())
	if expired {
		s.notify()
	}
	return err
}

// ExpirePending expires the given pending actions now, for a person (a
// runbook's expire_pending): each ends like an action past its expiry,
// with its action.expired event and the end of the journey that waited.
func (s *Service) ExpirePending(ctx context.Context, ids []string, actor audit.Actor, reason string) (int, error) {
	n, err := approvals.ExpireNow(ctx, s.o.DB, ids, actor, s.o.Redactor.String(reason), s.onDecided, s.o.Now())
	if n > 0 {
		s.notify()
	}
	return n, err
}
