// Package approvals owns high-impact actions and their rules: creation,
// bound to the exact payload by a digest (actions.go); how many approvers
// an action needs (dualcontrol.go); who may decide or reverse it
// (policy.go); decisions, cancellation and expiry (decide.go); and every
// status change after approval (execution.go). Each change is one
// transaction with its audit event and a compare-and-set on the status.
//
// The runtime drives it:
//
//	req, _ := approvals.Required(ctx, tx, tenantID, amount, target, now)
//	a, _ := approvals.Create(ctx, tx, sealer, spec, now) // pending
//	res, _ := approvals.Decide(ctx, db, request, onDecided, now)
//	approvals.StartExecuting(ctx, db, a.ID, now)
//	approvals.Executed(ctx, tx, a, slug, receipt, now) // or Failed
package approvals

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/canon"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
)

// Statuses of an action.
const (
	StatusPending   = "pending"
	StatusApproved  = "approved"
	StatusExecuting = "executing"
	StatusExecuted  = "executed"
	StatusFailed    = "failed"
	StatusRejected  = "rejected"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled"
)

// Action is a pending (or decided) high-impact action.
type Action struct {
	ID                string
	TenantID          string
	JourneyID         string
	StepN             int
	KeyID             string
	RequestedBy       string
	Tool              string
	ArgumentsRedacted json.RawMessage // for display; the real ones are sealed
	// Summary is the headline approvers read: Warden's sentence about the
	// call, never the agent's words (AgentSummary).
	Summary string
	// AgentSummary is what the agent said about its call (redacted), shown
	// attributed to it; "" when it said nothing (a journey's action).
	AgentSummary      string
	Targets           []string
	AmountMinor       *int64
	Currency          string
	Reason            string
	Impact            risk.Impact
	Reversibility     risk.Reversibility
	PolicyRule        string
	ApprovalsRequired int
	PayloadDigest     string
	IdempotencyKey    string
	Status            string
	ExpiresAt         time.Time
	CreatedAt         time.Time
	ApprovalsGiven    int
	Receipt           json.RawMessage // the provider's receipt once executed
	Failure           string          // why execution failed
	Compensates       string          // the action this one reverses
	CallbackURL       string
	External          bool // the agent executes it and reports back
	DecidedAt         *time.Time
	ExecutedAt        *time.Time
	TargetLabel       string // what the action acts on, for dual control ("ORD-1004")
	ApprovalBasis     string // why it needs the approvers it needs, when that is not the ordinary one
	// KeyOwner is the principal who created the key the agent asked with:
	// like RequestedBy, that person may not approve it.
	KeyOwner string
}

// Amount returns the action's amount with its currency, when it has one.
// A currency Warden no longer accepts is kept as written with two decimals
// rather than hidden.
func (a Action) Amount() (money.Amount, bool) {
	if a.AmountMinor == nil {
		return money.Amount{}, false
	}
	c, err := money.ParseCurrency(a.Currency)
	if err != nil {
		c = money.Currency{Code: a.Currency, Exponent: 2}
	}
	return money.Amount{Minor: *a.AmountMinor, Currency: c}, true
}

// Spec is what creating an action needs. Args are the real arguments: they
// are sealed at rest and redacted for display.
type Spec struct {
	TenantID          string
	TenantSlug        string
	JourneyID         string
	StepN             int
	KeyID             string
	RequestedBy       string // principal id for console requests
	Tool              Tool
	Args              json.RawMessage
	ArgsRedacted      json.RawMessage
	Summary           string // Warden's headline
	AgentSummary      string // the agent's own words about the call, redacted
	Targets           []string
	AmountMinor       *int64
	Currency          string
	Reason            string
	Rule              string
	ApprovalsRequired int
	// IdempotencyKey overrides the derived key (a compensation's key is
	// "compensates:" + the original's key).
	IdempotencyKey string
	Compensates    string // id of the action this one reverses
	CallbackURL    string // where the decision is sent (external agents); sealed at rest
	// CallbackURLShown is CallbackURL with its query redacted: what is
	// stored in the clear and shown.
	CallbackURLShown string
	External         bool   // the agent executes it and reports the result
	Target           Target // what it acts on, for dual control
	ApprovalBasis    string // Requirement.Basis
	KeyOwner         string // the principal who created the requesting key
	// Total is the target's total the call's arguments declare
	// (policy.Facts Total): the action may ask for at most what is left
	// of it (refundable.go).
	Total *money.Amount
}

// PayloadDigest binds an approval to the exact call: the SHA-256 of the
// canonical JSON of {"arguments": ..., "tool": ...}, in hex.
func PayloadDigest(tool string, args json.RawMessage) (string, error) {
	c, err := canon.JSON(args)
	if err != nil {
		return "", fmt.Errorf("payload digest: arguments: %w", err)
	}
	name, _ := json.Marshal(tool)
	sum := sha256.Sum256([]byte(`{"arguments":` + string(c) + `,"tool":` + string(name) + `}`))
	return hex.EncodeToString(sum[:]), nil
}

// idempotencyKey is stable for one step of one journey and its payload, so
// every retry and recovery presents the same key to the provider.
func idempotencyKey(s Spec, digest string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%d|%s", s.TenantID, s.JourneyID, s.StepN, digest))
	return "wdn_" + hex.EncodeToString(sum[:16])
}

// JobExpire is the kind of the job that expires a pending action at its
// expiry (the runtime handles it: an expiry ends the journey that waited).
const JobExpire = "expire_action"

// ExpireJob is JobExpire's payload.
type ExpireJob struct {
	ActionID string `json:"action_id"`
}

// Create records a pending action inside tx, with its audit event.
func Create(ctx context.Context, tx *store.Tx, sealer Sealer, s Spec, now time.Time) (Action, error) {
	digest, err := PayloadDigest(s.Tool.Name, s.Args)
	if err != nil {
		return Action{}, err
	}
	if s.ApprovalsRequired < 1 {
		s.ApprovalsRequired = 1
	}
	ttl := s.Tool.ApprovalTTL
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	a := Action{
		ID: "act_" + store.NewID(), TenantID: s.TenantID, JourneyID: s.JourneyID, StepN: s.StepN, KeyID: s.KeyID,
		RequestedBy: s.RequestedBy, Tool: s.Tool.Name, ArgumentsRedacted: s.ArgsRedacted, Summary: s.Summary,
		AgentSummary: s.AgentSummary, Targets: s.Targets, AmountMinor: s.AmountMinor, Currency: s.Currency, Reason: s.Reason,
		Impact: s.Tool.Impact, Reversibility: s.Tool.Reversibility, PolicyRule: s.Rule,
		ApprovalsRequired: s.ApprovalsRequired, PayloadDigest: digest, IdempotencyKey: idempotencyKey(s, digest),
		Status: StatusPending, ExpiresAt: now.Add(ttl).UTC(), CreatedAt: now.UTC(),
		Compensates: s.Compensates, CallbackURL: s.CallbackURLShown, External: s.External,
		TargetLabel: s.Target.Label, ApprovalBasis: s.ApprovalBasis, KeyOwner: s.KeyOwner,
	}
	if s.IdempotencyKey != "" {
		a.IdempotencyKey = s.IdempotencyKey
	}
	if a.Targets == nil {
		a.Targets = []string{}
	}
	if err := checkProposal(ctx, tx, s, a.IdempotencyKey); err != nil {
		return Action{}, err
	}
	targets, _ := json.Marshal(a.Targets)
	sealedCallback := ""
	if s.CallbackURL != "" {
		sealedCallback = sealer.Seal([]byte(s.CallbackURL), a.ID+"#callback")
		if a.CallbackURL == "" {
			a.CallbackURL = withoutQuery(s.CallbackURL)
		}
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO actions (id, tenant_id, journey_id, step_n, key_id, requested_by, tool, arguments_sealed,
			arguments_redacted, summary, targets, amount_minor, currency, reason, impact, reversibility, policy_rule,
			approvals_required, payload_digest, idempotency_key, status, expires_at, created_at, updated_at,
			compensates, callback_url, external, target_key, target_label, approval_basis, key_owner, callback_url_sealed,
			agent_summary)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.TenantID, a.JourneyID, a.StepN, a.KeyID, a.RequestedBy, a.Tool, sealer.Seal(s.Args, a.ID),
		string(a.ArgumentsRedacted), a.Summary, string(targets), a.AmountMinor, a.Currency, a.Reason,
		string(a.Impact), string(a.Reversibility), a.PolicyRule, a.ApprovalsRequired, a.PayloadDigest,
		a.IdempotencyKey, a.Status, store.FormatTime(a.ExpiresAt), store.FormatTime(now), store.FormatTime(now),
		a.Compensates, a.CallbackURL, a.External, s.Target.Key, a.TargetLabel, a.ApprovalBasis, a.KeyOwner, sealedCallback,
		a.AgentSummary)
	if err != nil {
		return Action{}, fmt.Errorf("create action: %w", err)
	}
	if weighed(s) {
		var total *int64
		if s.Total != nil {
			total = &s.Total.Minor
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET weigh_refundable = 1, total_minor = ? WHERE id = ?`, total, a.ID); err != nil {
			return Action{}, fmt.Errorf("create action: its total: %w", err)
		}
	}
	// The job that expires it, in the same transaction: at its expiry
	// whichever worker (on PostgreSQL, whichever replica) is free runs
	// it, and a decision before then makes it a no-op.
	if err := jobs.Enqueue(ctx, tx, JobExpire, ExpireJob{ActionID: a.ID}, jobs.Options{UniqueKey: "expire:" + a.ID, RunAt: a.ExpiresAt}); err != nil {
		return Action{}, err
	}
	details := map[string]any{"tool": a.Tool, "summary": a.Summary, "payload_digest": a.PayloadDigest,
		"approvals_required": a.ApprovalsRequired, "rule": a.PolicyRule, "journey": a.JourneyID}
	if a.Compensates != "" {
		details["compensates"] = a.Compensates
	}
	if a.AmountMinor != nil {
		details["amount_minor"] = *a.AmountMinor
		details["currency"] = a.Currency
	}
	if a.ApprovalBasis != "" {
		details["approval_basis"] = a.ApprovalBasis
	}
	if a.AgentSummary != "" {
		details["agent_summary"] = a.AgentSummary
	}
	if s.RequestedBy != "" && a.Reason != "" {
		details["reason"] = a.Reason // a person's reason (a reversal's): evidence of why they asked
	}
	actor := audit.Actor{Type: audit.ActorKey, ID: s.KeyID}
	if s.RequestedBy != "" {
		actor = audit.Actor{Type: audit.ActorPrincipal, ID: s.RequestedBy}
	}
	if _, err := audit.Append(ctx, tx, audit.Event{
		Actor: actor, Tenant: s.TenantSlug, Verb: "action.requested",
		Subject: audit.Subject{Type: "action", ID: a.ID}, Details: details,
	}); err != nil {
		return Action{}, err
	}
	if err := notifyPending(ctx, tx, a, s.TenantSlug); err != nil {
		return Action{}, err
	}
	return a, nil
}

// actionColumns are the columns scan reads, in its order.
const actionColumns = `id, tenant_id, journey_id, step_n, key_id, requested_by, tool, arguments_redacted, summary,
	targets, amount_minor, currency, reason, impact, reversibility, policy_rule, approvals_required, payload_digest,
	idempotency_key, status, expires_at, created_at, approvals_given, receipt, failure, compensates, callback_url,
	external, decided_at, executed_at, target_label, approval_basis, key_owner, agent_summary`

const selectAction = `SELECT ` + actionColumns + ` FROM actions`

// ErrNotFound is an action that does not exist (or that the caller may not
// see: it is told the same); errors.Is matches it against store.ErrNotFound.
var ErrNotFound = problem.NotFound("not_found", "There is no action with this id.")

// Get loads an action, or ErrNotFound.
func Get(ctx context.Context, q store.Querier, id string) (Action, error) {
	a, err := store.Get(ctx, q, scan, selectAction+` WHERE id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Action{}, ErrNotFound
	}
	return a, err
}

// ByJourney returns the journey's newest action, or store.ErrNotFound.
func ByJourney(ctx context.Context, q store.Querier, journeyID string) (Action, error) {
	a, err := store.Get(ctx, q, scan, selectAction+` WHERE journey_id = ? ORDER BY created_at DESC LIMIT 1`, journeyID)
	if errors.Is(err, store.ErrNotFound) {
		return Action{}, err
	}
	return a, err
}

type scanner = store.Scanner

func scan(s scanner) (Action, error) {
	var a Action
	var args, targets, impact, rev, expires, created, receipt string
	var amount sql.NullInt64
	var decided, executed sql.NullString
	err := s.Scan(&a.ID, &a.TenantID, &a.JourneyID, &a.StepN, &a.KeyID, &a.RequestedBy, &a.Tool, &args, &a.Summary,
		&targets, &amount, &a.Currency, &a.Reason, &impact, &rev, &a.PolicyRule, &a.ApprovalsRequired,
		&a.PayloadDigest, &a.IdempotencyKey, &a.Status, &expires, &created, &a.ApprovalsGiven, &receipt, &a.Failure,
		&a.Compensates, &a.CallbackURL, &a.External, &decided, &executed, &a.TargetLabel, &a.ApprovalBasis, &a.KeyOwner, &a.AgentSummary)
	if err != nil {
		return Action{}, err
	}
	if receipt != "" {
		a.Receipt = json.RawMessage(receipt)
	}
	a.DecidedAt, a.ExecutedAt = optTime(decided), optTime(executed)
	a.ArgumentsRedacted = json.RawMessage(args)
	_ = json.Unmarshal([]byte(targets), &a.Targets)
	if amount.Valid {
		v := amount.Int64
		a.AmountMinor = &v
	}
	a.Impact, a.Reversibility = risk.Impact(impact), risk.Reversibility(rev)
	a.ExpiresAt, _ = time.Parse(time.RFC3339Nano, expires)
	a.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	return a, nil
}

func optTime(s sql.NullString) *time.Time {
	if !s.Valid || s.String == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return nil
	}
	return &t
}

// withoutQuery is a URL without its query and fragment: what is shown of
// a callback URL when the caller gave no redacted copy.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// OpenCallbackURL returns the URL an action's callbacks go to, unsealed;
// "" when it has none.
func OpenCallbackURL(ctx context.Context, q store.Querier, sealer Sealer, id string) (string, error) {
	var sealed string
	err := q.QueryRowContext(ctx, `SELECT callback_url_sealed FROM actions WHERE id = ?`, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil || sealed == "" {
		return "", err
	}
	raw, err := sealer.Open(sealed, id+"#callback")
	if err != nil {
		return "", fmt.Errorf("callback URL of %s: %w", id, err)
	}
	return string(raw), nil
}

// OpenArgs returns an action's real arguments, unsealed for execution.
func OpenArgs(ctx context.Context, q store.Querier, sealer Sealer, id string) (json.RawMessage, error) {
	var sealed string
	err := q.QueryRowContext(ctx, `SELECT arguments_sealed FROM actions WHERE id = ?`, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load arguments of %s: %w", id, err)
	}
	raw, err := sealer.Open(sealed, id)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %w", id, err)
	}
	return raw, nil
}

// Live reports whether an action in this status is still under way or
// done: pending, approved, executing or executed. Rejected, expired,
// cancelled and failed actions are finished without effect.
func Live(status string) bool {
	switch status {
	case StatusPending, StatusApproved, StatusExecuting, StatusExecuted:
		return true
	}
	return false
}

// Compensations returns the actions requested to reverse an action, newest
// first.
func Compensations(ctx context.Context, q store.Querier, actionID string) ([]Action, error) {
	out, err := store.Query(ctx, q, scan, selectAction+` WHERE compensates = ? ORDER BY created_at DESC, id DESC`, actionID)
	if err != nil {
		return nil, fmt.Errorf("reversals of %s: %w", actionID, err)
	}
	return out, nil
}
