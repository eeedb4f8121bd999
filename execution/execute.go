package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// Job kinds the runtime registers.
const (
	JobExecuteAction = "execute_action"
	JobCallback      = "action_callback"
)

// ErrBudget refuses an approval whose execution the tenant's budget cannot
// cover: nothing is recorded, the action stays pending.
var ErrBudget = problem.Conflict("budget_exhausted", "Its execution would overspend the tenant's budget. An admin can raise the budget; then approve again.").
	Titled("The tenant's budget cannot cover this action")

type actionJob struct {
	ActionID string `json:"action_id"`
}

// onDecided runs inside the transaction of an action's final decision
// (or its expiry): the agent's callback is enqueued and, for an approval,
// the ledger records the intended effect and the job that will execute it
// is enqueued, so the decision and its consequences exist together or not
// at all.
func (s *Service) onDecided(ctx context.Context, tx *store.Tx, a approvals.Action) error {
	if IsOperational(a.Tool) {
		fn := s.operational.Load()
		if fn == nil {
			return fmt.Errorf("action %s: no executor for operational tool %s", a.ID, a.Tool)
		}
		return (*fn)(ctx, tx, a)
	}
	if err := s.enqueueCallback(ctx, tx, a, a.Status); err != nil {
		return err
	}
	switch a.Status {
	case approvals.StatusRejected, approvals.StatusExpired, approvals.StatusCancelled:
		// The journey that waited for the action ends with it.
		return journeys.EndAfterAction(ctx, tx, a.JourneyID, a.StepN, a.Status, s.o.Now())
	}
	if a.Status != approvals.StatusApproved || a.External {
		return nil // the agent executes it and reports the result
	}
	slug, err := tenants.SlugOf(ctx, tx, a.TenantID)
	if err != nil {
		return err
	}
	// Budgets are reserved before work: the action's cost (one tool unit)
	// is reserved with the approval, or the approval is refused.
	t, err := s.tool(ctx, tx, a.Tool)
	if err != nil {
		return fmt.Errorf("tool %s: %w", a.Tool, err)
	}
	if t.UnitCostMicros > 0 {
		if err := budgets.Reserve(ctx, tx, a.TenantID, t.UnitCostMicros, s.o.Now()); err != nil {
			if errors.Is(err, budgets.ErrExhausted) || errors.Is(err, budgets.ErrNoBudget) {
				return ErrBudget.Wrap(err)
			}
			return err
		}
		if err := approvals.Reserve(ctx, tx, a.ID, t.UnitCostMicros); err != nil {
			return err
		}
	}
	if err := ledger.Intend(ctx, tx, ledger.Entry{Key: a.IdempotencyKey, Digest: a.PayloadDigest, Tool: a.Tool, Tenant: slug, ActionID: a.ID}); err != nil {
		return err
	}
	return jobs.Enqueue(ctx, tx, JobExecuteAction, actionJob{ActionID: a.ID}, jobs.Options{UniqueKey: "exec:" + a.ID, Timeout: executionTimeout(t)})
}

// executionTimeout is the job timeout an execution of t needs: every
// attempt at the tool's timeout, with room for the backoff between them
// and for recording the result. 0 (jobs.JobTimeout) for the tools that
// fit in it, so a job a dead replica held runs again within the bound
// docs/deploy.md gives; a slower tool's execution is not cut short, and
// is run again after its own bound.
func executionTimeout(t tools.Tool) time.Duration {
	per := t.Timeout
	if per <= 0 {
		per = tools.DefaultTimeout
	}
	need := per*time.Duration(max(t.MaxAttempts, 1)) + 15*time.Second
	if need <= jobs.JobTimeout {
		return 0
	}
	return need
}

// OperationalPrefix starts the tool name of an action that a runbook's
// press asked for (runbook:purge_traces): Warden's own operational tool,
// not one of the catalog.
const OperationalPrefix = "runbook:"

// IsOperational reports whether tool is a runbook's operational tool.
func IsOperational(tool string) bool { return strings.HasPrefix(tool, OperationalPrefix) }

// SetOperational registers what a final decision on an operational action
// does (runbooks.Decided): it runs inside the decision's transaction
// instead of the ledger and the job, so the approval and the tool's
// effect commit together, once. Set it at start-up.
func (s *Service) SetOperational(fn approvals.OnDecided) { s.operational.Store(&fn) }

// Decide records an approver's decision; the final approval enqueues the
// execution in the same transaction, and the worker is woken after commit.
func (s *Service) Decide(ctx context.Context, req approvals.Request) (approvals.Result, error) {
	// The comment goes into the permanent audit chain: no PII in the clear.
	req.Comment = s.o.Redactor.String(req.Comment)
	res, err := approvals.Decide(ctx, s.o.DB, req, s.onDecided, s.o.Now())
	if err == nil && res.Final {
		s.notify()
	}
	return res, err
}

func (s *Service) notify() {
	if s.o.Queue != nil {
		s.o.Queue.Notify()
	}
}

// HandleExecute is the job that executes an approved action: once, through
// the effect ledger, under the action's stable idempotency key. A transient
// failure returns an error and the job retries later with the same key; a
// terminal one marks the action failed for review.
func (s *Service) HandleExecute(ctx context.Context, j jobs.Job) error {
	var p actionJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return &jobs.Permanent{Err: err}
	}
	return s.ExecuteAction(ctx, p.ActionID)
}

// ExecuteAction executes one approved action (see HandleExecute). Running
// it again for an executed action changes nothing. Each run is a span
// (tracing.go).
func (s *Service) ExecuteAction(ctx context.Context, actionID string) error {
	ctx, span := startExecute(ctx, actionID)
	err := s.executeAction(ctx, actionID)
	endExecute(span, err)
	return err
}

func (s *Service) executeAction(ctx context.Context, actionID string) error {
	a, err := approvals.Get(ctx, s.o.DB.Read(), actionID)
	if err != nil {
		return &jobs.Permanent{Err: err}
	}
	noteAction(ctx, a)
	switch a.Status {
	case approvals.StatusApproved:
		if _, err := approvals.StartExecuting(ctx, s.o.DB, a.ID, s.o.Now()); err != nil {
			if p, ok := approvals.ExceedsRefundable(err); ok {
				// Other refunds of its target executed first: nothing is
				// sent, and the action fails saying what is left.
				return s.fail(ctx, a, "Not sent: "+p.Message)
			}
			return err
		}
	case approvals.StatusExecuting:
		// A retry, or a job rescued after a crash: same key, same ledger.
	default:
		return nil // executed, failed or never approved: nothing to do
	}
	args, err := approvals.OpenArgs(ctx, s.o.DB.Read(), s.o.Sealer, a.ID)
	if err != nil {
		return s.failBeforeCall(ctx, a, "its arguments cannot be opened: "+err.Error())
	}
	t, err := s.tool(ctx, s.o.DB.Read(), a.Tool)
	if errors.Is(err, store.ErrNotFound) {
		return s.failBeforeCall(ctx, a, "tool "+a.Tool+" is no longer in the catalog")
	}
	if err != nil {
		return err
	}
	if err := catalog.ForTenant(ctx, s.o.DB.Read(), &t, a.TenantID); err != nil {
		return err
	}
	if !t.Enabled {
		return s.failBeforeCall(ctx, a, approvals.BlockedFailure(approvals.BlockToolOff, a.Tool))
	}
	tenant, err := tenants.ByID(ctx, s.o.DB.Read(), a.TenantID)
	if err != nil {
		return err
	}
	if tenant.Frozen {
		return s.failBeforeCall(ctx, a, approvals.BlockedFailure(approvals.BlockTenantFrozen, a.Tool))
	}
	p := s.o.Providers[t.Provider]
	if p == nil {
		return s.failBeforeCall(ctx, a, "tool "+a.Tool+" has no provider ("+t.Provider+")")
	}
	// The digest is recomputed from what will really be sent, so the ledger
	// refuses arguments that are not the approved ones.
	digest, err := approvals.PayloadDigest(t.Name, args)
	if err != nil {
		return s.failBeforeCall(ctx, a, "its arguments are not valid JSON")
	}
	entry, err := ledger.Execute(ctx, s.o.DB, p, t, tools.Call{Tool: t.Name, Args: args, IdempotencyKey: a.IdempotencyKey, Tenant: tenant.Slug}, digest)
	switch {
	case errors.Is(err, ledger.ErrFailed):
		return s.fail(ctx, a, s.o.Redactor.String(entry.Error))
	case errors.Is(err, ledger.ErrDigestMismatch), errors.Is(err, ledger.ErrNotIntended):
		return s.failBeforeCall(ctx, a, "the ledger refused the call: "+err.Error())
	case errors.Is(err, ledger.ErrOutcomeUnknown):
		// Its effect stays flagged for review in the ledger, and the action
		// fails for review: a person finds out whether it happened; the
		// call is never sent again.
		return s.fail(ctx, a, "outcome unknown: an earlier attempt may have reached "+t.Name+", which takes no idempotency key; ask its owner whether it happened (it is never sent again)")
	case err != nil:
		return err // transient: the job retries with the same key
	}
	if f := s.afterRecord.Load(); f != nil {
		(*f)(t.Name)
	}
	return s.complete(ctx, a, entry.Receipt, t)
}

// CompleteFromLedger finishes an action whose effect the reconciler found
// recorded (after a crash between the provider's commit and Warden's
// record).
func (s *Service) CompleteFromLedger(ctx context.Context, key string) error {
	e, err := ledger.Get(ctx, s.o.DB.Read(), key)
	if err != nil || e.State != ledger.Recorded || e.ActionID == "" {
		return err
	}
	a, err := approvals.Get(ctx, s.o.DB.Read(), e.ActionID)
	if err != nil {
		return err
	}
	if a.Status != approvals.StatusExecuting && a.Status != approvals.StatusApproved {
		return nil
	}
	t, _ := s.tool(ctx, s.o.DB.Read(), a.Tool)
	return s.complete(ctx, a, e.Receipt, t)
}

// failBeforeCall fails an action for a reason found before the provider
// call — unless an earlier attempt may already have reached the provider
// (the ledger record is RESERVED with attempts): then the reconciler must
// find out what happened, and the action is left executing for review.
func (s *Service) failBeforeCall(ctx context.Context, a approvals.Action, reason string) error {
	if e, err := ledger.Get(ctx, s.o.DB.Read(), a.IdempotencyKey); err == nil && e.State == ledger.Reserved && e.Attempts > 0 {
		if t, err := s.tool(ctx, s.o.DB.Read(), a.Tool); err == nil && t.AtMostOnce {
			// No reconciler can ask this provider: a person must.
			why := "outcome unknown: an earlier attempt may have reached " + a.Tool + ", which takes no idempotency key, and it cannot run now (" + reason + "); ask its owner whether it happened (it is never sent again)"
			if err := ledger.NeedsReview(context.WithoutCancel(ctx), s.o.DB, a.IdempotencyKey, why); err != nil {
				return err
			}
			return s.fail(ctx, a, why)
		}
		return &jobs.Permanent{Err: fmt.Errorf("action %s: %s; an earlier attempt may have reached the provider, so the reconciler decides", a.ID, reason)}
	}
	return s.fail(ctx, a, reason)
}

// fail marks the action failed (needs review) and ends its journey.
func (s *Service) fail(ctx context.Context, a approvals.Action, reason string) error {
	now := s.o.Now()
	// The work is done: record it even if the caller went away.
	ctx = context.WithoutCancel(ctx)
	err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		slug, err := tenants.SlugOf(ctx, tx, a.TenantID)
		if err != nil {
			return err
		}
		// Locks in Warden's order (action row → budget row → audit
		// chain): the reservation is given back before Failed appends
		// the audit event. An action that had ended already rolls it
		// back (errUnchanged).
		if err := settleAction(ctx, tx, a.ID, a.TenantID, 0); err != nil {
			return err
		}
		changed, err := approvals.Failed(ctx, tx, a, slug, reason, now)
		if err != nil {
			return err
		}
		if !changed {
			return errUnchanged
		}
		if err := journeys.FailAfterAction(ctx, tx, a.JourneyID, a.StepN, "action_failed", reason, now); err != nil {
			return err
		}
		return s.enqueueCallback(ctx, tx, a, approvals.StatusFailed)
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil {
		return err
	}
	s.notify()
	return nil
}

// complete records the receipt, marks the action executed and resumes
// its journey from the step journal, in one transaction.
func (s *Service) complete(ctx context.Context, a approvals.Action, receipt json.RawMessage, t tools.Tool) error {
	now := s.o.Now()
	// The work is done: record it even if the caller went away.
	ctx = context.WithoutCancel(ctx)
	err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		slug, err := tenants.SlugOf(ctx, tx, a.TenantID)
		if err != nil {
			return err
		}
		// Locks in Warden's order (action row → budget row → audit
		// chain): the cost is settled before Executed appends the audit
		// event. An action completed already rolls it back (errUnchanged).
		if err := settleAction(ctx, tx, a.ID, a.TenantID, t.UnitCostMicros); err != nil {
			return err
		}
		changed, err := approvals.Executed(ctx, tx, a, slug, json.RawMessage(s.redactJSON(receipt)), now)
		if err != nil {
			return err
		}
		if !changed {
			return errUnchanged // already completed
		}
		if err := s.o.Journeys.Resume(ctx, tx, a, receipt, t, now); err != nil {
			return err
		}
		return s.enqueueCallback(ctx, tx, a, approvals.StatusExecuted)
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil {
		return err
	}
	s.notify()
	return nil
}

// enqueueCallback queues the agent's callback for the action's new status,
// once per status, when it gave a callback URL.
func (s *Service) enqueueCallback(ctx context.Context, tx *store.Tx, a approvals.Action, status string) error {
	if a.CallbackURL == "" {
		return nil
	}
	return jobs.Enqueue(ctx, tx, JobCallback, actionJob{ActionID: a.ID}, jobs.Options{UniqueKey: "callback:" + a.ID + ":" + status, MaxAttempts: 12})
}

// errUnchanged rolls back the end of an action that had ended already:
// nothing of it is written twice.
var errUnchanged = errors.New("action ended already")

// settleAction charges an executed action's cost against what its
// approval reserved and releases the rest (all of it when it failed).
func settleAction(ctx context.Context, tx *store.Tx, actionID, tenantID string, actual int64) error {
	reserved, err := approvals.TakeReserved(ctx, tx, actionID)
	if err != nil || reserved == 0 {
		return err
	}
	if err := budgets.Settle(ctx, tx, tenantID, reserved, actual); err != nil {
		return err
	}
	if actual <= 0 {
		return nil
	}
	return approvals.RecordCharge(ctx, tx, actionID, min(actual, reserved), time.Now())
}
