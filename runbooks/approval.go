package runbooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// opArgs are the arguments of an operational action, fixed at the press.
type opArgs struct {
	Run    string    `json:"run"`
	Tenant string    `json:"tenant"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Tool   string    `json:"tool,omitempty"` // a retry's tool
}

// requestApproval is the press of a high-impact tool: instead of running
// it, an approval request (an action "runbook:<tool>" requested by the
// presser, so the presser cannot approve it) is created with the run,
// which waits for it. Decided finishes the run on the final decision.
func requestApproval(ctx context.Context, d Deps, run RunRecord, a Action, plan Plan) (RunRecord, error) {
	err := d.DB.Transact(ctx, func(tx *store.Tx) error {
		t, err := tenants.BySlug(ctx, tx, plan.Tenant)
		if err != nil {
			return err
		}
		args, err := json.Marshal(opArgs{Run: run.ID, Tenant: t.Slug, From: plan.Since, To: plan.Until, Tool: a.Args["tool"]})
		if err != nil {
			return err
		}
		act, err := approvals.Create(ctx, tx, d.Sealer, approvals.Spec{
			TenantID: t.ID, TenantSlug: t.Slug, RequestedBy: run.Principal,
			Tool: approvals.Tool{Name: execution.OperationalPrefix + a.Tool, Impact: risk.ImpactHigh, Reversibility: risk.Irreversible, ApprovalTTL: 24 * time.Hour},
			Args: args, ArgsRedacted: args, Summary: plan.Summary, Reason: run.Reason, Rule: "runbook",
			ApprovalsRequired: 1, IdempotencyKey: "runbook:" + run.ID,
		}, time.Now())
		if err != nil {
			return err
		}
		run.Status, run.ActionID = StatusAwaiting, act.ID
		run.Outcome = "Awaiting approval by someone other than the presser: /approvals/" + act.ID
		_, err = tx.ExecContext(ctx, `UPDATE runbook_runs SET status = ?, outcome = ?, action_id = ? WHERE id = ? AND status = ?`,
			run.Status, run.Outcome, act.ID, run.ID, StatusRunning)
		return err
	})
	if err != nil {
		return run, fmt.Errorf("request approval of runbook run %s: %w", run.ID, err)
	}
	return run, nil
}

// Decided is what a final decision on a runbook's approval request does,
// inside the decision's transaction (the runtime calls it for
// "runbook:" actions): on approval the tool runs and the action is
// executed; on rejection, expiry or cancellation nothing changes. Either
// way the run finishes with its runbook.action event. The decision's
// compare-and-set makes this run once per action; a run no longer
// awaiting is left alone.
func Decided(d Deps) approvals.OnDecided {
	return func(ctx context.Context, tx *store.Tx, act approvals.Action) error {
		raw, err := approvals.OpenArgs(ctx, tx, d.Sealer, act.ID)
		if err != nil {
			return fmt.Errorf("runbook action %s: %w", act.ID, err)
		}
		var args opArgs
		if err := json.Unmarshal(raw, &args); err != nil {
			return fmt.Errorf("runbook action %s: %w", act.ID, err)
		}
		run, err := store.Get(ctx, tx, scanRun, selectRun+` WHERE id = ?`, args.Run)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (run.Status != StatusAwaiting || run.ActionID != act.ID)) {
			return nil
		}
		if err != nil {
			return err
		}
		a := Action{ID: run.Action, Tool: run.Tool}
		if rb, ok := d.Runbooks.Get(run.Runbook); ok {
			if found := rb.Action(run.Action); found != nil {
				a = *found
			}
		}
		plan := Plan{Tool: run.Tool, Tenant: args.Tenant, Since: args.From, Until: args.To}
		now := time.Now().UTC()
		switch act.Status {
		case approvals.StatusApproved:
			outcome, toolErr := applyApproved(ctx, tx, d, run, act, args)
			var refused *problem.Error
			switch {
			case toolErr == nil:
				receipt, _ := json.Marshal(map[string]string{"outcome": outcome})
				if _, err := approvals.Executed(ctx, tx, act, args.Tenant, receipt, now); err != nil {
					return err
				}
				run.Status, run.Outcome = StatusDone, "Approved and run: "+outcome
			case errors.As(toolErr, &refused) && refused.Kind != problem.KindInternal:
				if _, err := approvals.Failed(ctx, tx, act, args.Tenant, refused.Message, now); err != nil {
					return err
				}
				run.Status, run.Outcome = StatusFailed, "Approved, then refused: "+refused.Message
			default:
				return toolErr // the decision rolls back with it: approve again
			}
		case approvals.StatusRejected:
			run.Status, run.Outcome = StatusFailed, "Rejected by an approver; nothing changed."
			if ds, err := approvals.Decisions(ctx, tx, act.ID); err == nil && len(ds) > 0 {
				run.Outcome = "Rejected by " + ds[len(ds)-1].PrincipalName + ": " + ds[len(ds)-1].Comment + " Nothing changed."
			}
		case approvals.StatusExpired:
			run.Status, run.Outcome = StatusFailed, "Expired before anyone approved it; nothing changed."
		default:
			run.Status, run.Outcome = StatusFailed, "The approval request was "+act.Status+"; nothing changed."
		}
		return finish(ctx, tx, &run, a, plan, run.Runbook)
	}
}

// applyApproved runs an approved high-impact tool inside the decision's
// transaction, with its own audit event.
func applyApproved(ctx context.Context, tx *store.Tx, d Deps, run RunRecord, act approvals.Action, args opArgs) (string, error) {
	switch run.Tool {
	case ToolRetryFailed:
		if d.Runtime == nil {
			return "", errNoRuntime
		}
		rep, err := d.Runtime.RetryFailed(ctx, tx, act.TenantID, args.Tool, run.ID, audit.Actor{Type: audit.ActorPrincipal, ID: run.Principal}, run.Reason)
		if err != nil {
			return "", err
		}
		return retried(rep), nil
	case ToolPurgeTraces:
		n, err := journeys.DeleteRange(ctx, tx, act.TenantID, args.From, args.To)
		if err != nil {
			return "", err
		}
		approvedBy := ""
		if ds, err := approvals.Decisions(ctx, tx, act.ID); err == nil && len(ds) > 0 {
			approvedBy = ds[len(ds)-1].PrincipalID
		}
		if _, err := audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorPrincipal, ID: run.Principal}, Tenant: args.Tenant, Verb: "traces.purged_range",
			Subject: audit.Subject{Type: "tenant", ID: act.TenantID},
			Details: map[string]any{"journeys": n, "from": store.FormatTime(args.From), "to": store.FormatTime(args.To),
				"run": run.ID, "approval": act.ID, "approved_by": approvedBy},
		}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Deleted %d journeys of tenant %s created from %s to %s; audit events kept.", n, args.Tenant,
			args.From.Format(time.RFC3339), args.To.Format(time.RFC3339)), nil
	}
	return "", problem.Unprocessable("unknown_tool", "The approved action names no tool Warden runs after approval.")
}
