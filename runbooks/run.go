package runbooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
)

// Run statuses.
const (
	StatusRunning = "running" // claimed; its tool is running (or Warden stopped while it ran)
	// StatusAwaiting is a high-impact tool's run: its approval request
	// (ActionID) waits for someone other than the presser.
	StatusAwaiting = "awaiting_approval"
	StatusDone     = "done"
	StatusFailed   = "failed"
)

// MaxReason bounds the reason typed for a press: it is kept for good.
const MaxReason = 500

// Roles that may press a runbook's buttons.
var Roles = []string{identity.RoleOncall, identity.RoleAdmin}

// Errors people can act on.
var (
	ErrReasonRequired = problem.Unprocessable("reason_required", "Say why you are pressing this: the reason is kept with the run and in the audit trail.")
	ErrReasonTooLong  = problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason to %d characters.", MaxReason))
)

// RunRecord is one press of an action.
type RunRecord struct {
	ID            string
	Key           string // the confirmation page's one-time token
	Runbook       string
	Action        string
	Tool          string
	Principal     string
	PrincipalName string
	Reason        string
	Status        string
	Outcome       string
	AuditSeq      int64  // the runbook.action event; 0 while running or awaiting approval
	ActionID      string // the approval request of a high-impact tool
	CreatedAt     time.Time
}

// Run presses one action of one runbook for p, once per idempotency key.
//
// The key is the one-time token the confirmation page carried: the first
// request with it claims a run (a UNIQUE row) before the tool runs, so a
// double submit or a retried request finds that run and returns it
// without running the tool again. The tool is one domain entry point that
// commits its own change with its own audit event; then the run is
// finished in one transaction with its "runbook.action" event (who,
// runbook, action, tool, reason, outcome), whose seq the run keeps. A tool
// that refuses (an unknown target, a release not in history) finishes the
// run as failed with the refusal as its outcome; nothing else changes.
//
// A button of a runbook from the runbook directory that no second admin
// published as it is now (CheckPublished) is refused with a 409 before
// anything is recorded.
//
// Only on-call and admins may press; a tool that changes one tenant needs
// that tenant in p's scope, and one that reaches every tenant (a release,
// a switch, reconciling) needs a scope of all tenants. Without a reason it
// is ErrReasonRequired and nothing changes.
func Run(ctx context.Context, d Deps, p *identity.Principal, runbookID, actionID, reason, key string) (RunRecord, error) {
	return RunWith(ctx, d, p, runbookID, actionID, nil, reason, key)
}

// RunWith is Run of an action whose arguments name parameters ("$tool"),
// filled from params (alerts.Cause.Params of the alert the runbook was
// opened from); the filled arguments are what runs and what the run's
// event records, with the alert (params["alert"]). A parameter params
// lacks refuses the press and changes nothing.
func RunWith(ctx context.Context, d Deps, p *identity.Principal, runbookID, actionID string, params map[string]string, reason, key string) (RunRecord, error) {
	if p == nil || !p.HasAnyRole(Roles...) {
		return RunRecord{}, problem.Forbidden("forbidden", "Only on-call and admins may press a runbook's buttons.")
	}
	rb, ok := d.Runbooks.Get(runbookID)
	if !ok {
		return RunRecord{}, problem.NotFound("not_found", "There is no runbook "+runbookID+".")
	}
	a := rb.Action(actionID)
	if a == nil {
		return RunRecord{}, problem.NotFound("not_found", "Runbook "+rb.Title+" has no action "+actionID+".")
	}
	// A directory runbook's button runs only as a second admin
	// published it (publish.go); a held one is refused before anything.
	if err := CheckPublished(ctx, d.DB.Read(), rb, *a); err != nil {
		return RunRecord{}, err
	}
	filled, missing := a.Fill(params)
	if len(missing) > 0 {
		return RunRecord{}, ErrMissingParams(missing)
	}
	a = &filled
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return RunRecord{}, ErrReasonRequired
	case utf8.RuneCountInString(reason) > MaxReason:
		return RunRecord{}, ErrReasonTooLong
	case key == "" || len(key) > 100:
		return RunRecord{}, problem.Invalid("bad_token", "The confirmation page's token is missing: open the action again and confirm from there.")
	}
	if prev, err := runByKey(ctx, d.DB.Read(), key); err == nil {
		return same(prev, rb.ID, a.ID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return RunRecord{}, err
	}
	plan, err := PlanAction(ctx, d, *a)
	if err != nil {
		return RunRecord{}, err
	}
	if err := checkScope(p, plan); err != nil {
		return RunRecord{}, err
	}

	run := RunRecord{ID: store.NewID(), Key: key, Runbook: rb.ID, Action: a.ID, Tool: a.Tool,
		Principal: p.ID, PrincipalName: p.DisplayName(), Reason: reason, Status: StatusRunning, CreatedAt: time.Now().UTC()}
	claimed := false
	err = d.DB.Transact(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO runbook_runs (id, idempotency_key, runbook, action, tool, principal, principal_name, reason, status, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
			run.ID, key, run.Runbook, run.Action, run.Tool, run.Principal, run.PrincipalName, reason, StatusRunning, store.FormatTime(run.CreatedAt))
		if err != nil {
			return fmt.Errorf("claim runbook run: %w", err)
		}
		n, _ := res.RowsAffected()
		claimed = n == 1
		return nil
	})
	if err != nil {
		return RunRecord{}, err
	}
	if !claimed { // another request with this token got here first
		prev, err := runByKey(ctx, d.DB.Read(), key)
		if err != nil {
			return RunRecord{}, err
		}
		return same(prev, rb.ID, a.ID)
	}

	actor := audit.Actor{Type: audit.ActorPrincipal, ID: p.ID}
	plan.alert = params["alert"]
	if plan.NeedsApproval {
		return requestApproval(ctx, d, run, *a, plan)
	}
	plan.run = run.ID
	// A button that loosens a control (switches something back on,
	// unfreezes a tenant, raises a budget) asks for it as a pending
	// change instead (docs/changes.md).
	outcome, asked, toolErr := governed(ctx, d, p, *a, reason)
	if !asked && toolErr == nil {
		outcome, toolErr = apply(ctx, d, releases.Author{Actor: actor, Name: p.DisplayName()}, *a, plan, reason)
	}
	run.Status, run.Outcome = StatusDone, outcome
	var refused *problem.Error
	switch {
	case toolErr == nil:
	case errors.As(toolErr, &refused) && refused.Kind != problem.KindInternal:
		run.Status, run.Outcome = StatusFailed, "Refused: "+refused.Message
	default:
		run.Status, run.Outcome = StatusFailed, "Warden could not finish the tool; its logs say why."
	}
	err = d.DB.Transact(ctx, func(tx *store.Tx) error {
		return finish(ctx, tx, &run, *a, plan, rb.ID)
	})
	if err != nil {
		return run, errors.Join(err, toolErr)
	}
	if run.Status == StatusFailed && refused == nil {
		return run, fmt.Errorf("runbook %s action %s: %w", rb.ID, a.ID, toolErr)
	}
	return run, nil
}

// finish records a run's end with its runbook.action event (who,
// runbook, action, tool, reason, outcome) inside tx.
func finish(ctx context.Context, tx *store.Tx, run *RunRecord, a Action, plan Plan, runbookID string) error {
	details := map[string]any{
		"runbook": runbookID, "action": a.ID, "label": a.Label, "tool": a.Tool, "reason": run.Reason,
		"status": run.Status, "outcome": run.Outcome,
	}
	if len(a.Args) > 0 {
		args := map[string]any{}
		for k, v := range a.Args {
			args[k] = v
		}
		details["args"] = args
	}
	if plan.From != "" {
		details["from"], details["to"] = plan.From, plan.To
	}
	if plan.alert != "" {
		details["alert"] = plan.alert
	}
	if run.ActionID != "" {
		details["approval"] = run.ActionID
	}
	ev, err := audit.Append(ctx, tx, audit.Event{
		Actor: audit.Actor{Type: audit.ActorPrincipal, ID: run.Principal}, Tenant: plan.Tenant, Verb: "runbook.action",
		Subject: audit.Subject{Type: "runbook", ID: run.ID}, Details: details,
	})
	if err != nil {
		return err
	}
	run.AuditSeq = ev.Seq
	_, err = tx.ExecContext(ctx, `UPDATE runbook_runs SET status = ?, outcome = ?, audit_seq = ?, finished_at = ? WHERE id = ?`,
		run.Status, run.Outcome, ev.Seq, store.Now(), run.ID)
	if err != nil {
		return fmt.Errorf("finish runbook run %s: %w", run.ID, err)
	}
	return nil
}

// same returns the earlier run of a token, unless the token was used for
// another action (a tampered or mixed-up form).
func same(prev RunRecord, runbookID, actionID string) (RunRecord, error) {
	if prev.Runbook != runbookID || prev.Action != actionID {
		return RunRecord{}, problem.Conflict("token_used", "This confirmation was already used for another action: open the action again.")
	}
	return prev, nil
}

func checkScope(p *identity.Principal, plan Plan) error {
	if plan.Tenant == "" {
		if !p.AllTenantScope() {
			return problem.Forbidden("forbidden", "This action affects every tenant, so it needs a tenant scope of all tenants.")
		}
		return nil
	}
	if !p.InTenant(plan.Tenant) {
		return problem.Forbidden("forbidden", "Tenant "+plan.Tenant+" is outside your tenant scope.")
	}
	return nil
}

const selectRun = `SELECT id, idempotency_key, runbook, action, tool, principal, principal_name, reason, status, outcome, COALESCE(audit_seq, 0), created_at, action_id FROM runbook_runs`

func scanRun(row store.Scanner) (RunRecord, error) {
	var r RunRecord
	var at string
	if err := row.Scan(&r.ID, &r.Key, &r.Runbook, &r.Action, &r.Tool, &r.Principal, &r.PrincipalName, &r.Reason, &r.Status, &r.Outcome, &r.AuditSeq, &at, &r.ActionID); err != nil {
		return RunRecord{}, err
	}
	r.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
	return r, nil
}

func runByKey(ctx context.Context, q store.Querier, key string) (RunRecord, error) {
	return store.Get(ctx, q, scanRun, selectRun+` WHERE idempotency_key = ?`, key)
}

// GetRun loads one run, or a 404.
func GetRun(ctx context.Context, q store.Querier, id string) (RunRecord, error) {
	r, err := store.Get(ctx, q, scanRun, selectRun+` WHERE id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return RunRecord{}, problem.NotFound("not_found", "There is no runbook run "+id+".")
	}
	if err != nil {
		return RunRecord{}, fmt.Errorf("runbook run %s: %w", id, err)
	}
	return r, nil
}

// Runs is a page of a runbook's runs, newest first.
func Runs(ctx context.Context, q store.Querier, runbookID string, page store.Page) (store.Paged[RunRecord], error) {
	order := store.Order{Key: "created_at", KeyDesc: true, ID: "id", IDDesc: true}
	where, args := page.Where(order)
	query := selectRun + ` WHERE runbook = ?`
	args = append([]any{runbookID}, args...)
	if where != "" {
		query += " AND " + where
	}
	out, err := store.Query(ctx, q, scanRun, query+" ORDER BY "+page.OrderBy(order)+" LIMIT ?", append(args, page.Fetch())...)
	if err != nil {
		return store.Paged[RunRecord]{}, fmt.Errorf("runs of runbook %s: %w", runbookID, err)
	}
	return store.Paginate(page, out, func(r RunRecord) store.Cursor {
		return store.Cursor{Key: store.FormatTime(r.CreatedAt), ID: r.ID}
	}), nil
}

// ErrMissingParams refuses an action whose arguments name parameters
// nothing filled: it was not opened from an alert that names them.
func ErrMissingParams(missing []string) *problem.Error {
	return problem.Unprocessable("missing_parameters", "This action works on the "+strings.Join(missing, " and ")+
		" an alert names: open the runbook from the alert (Alerts), or use Kill switches for any other.")
}

// ErrNoSuchRun is a run that is not there (or not of the runbook named).
var ErrNoSuchRun = problem.NotFound("not_found", "There is no such run of this runbook.")
