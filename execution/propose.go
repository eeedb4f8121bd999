package execution

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tools"
)

// Proposal is an external agent's request for approval of one tool call.
type Proposal struct {
	Caller    admission.Caller
	Tool      string
	Arguments json.RawMessage
	Summary   string
	Reason    string
	// Amount is the agent's top-level "amount" as it came (a JSON number
	// in minor units), parsed strictly here; Currency its ISO code. Where
	// the tool declares an amount argument, they must agree with it.
	Amount         json.RawMessage
	Currency       string
	CallbackURL    string
	IdempotencyKey string // optional: a retry with the same key returns the same action
}

// Propose records a pending action for an agent that runs elsewhere. The
// call passes the same policy as a journey's: the tool must exist, be in
// the key's scopes, be switched on, and its arguments must match its
// schema. If the tool's provider is external, the agent executes it after
// approval and reports the result; otherwise Warden executes it.
func (s *Service) Propose(ctx context.Context, p Proposal) (approvals.Action, error) {
	p.Summary, p.Reason = strings.TrimSpace(p.Summary), strings.TrimSpace(p.Reason)
	switch {
	case p.Tool == "":
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"tool" is required.`, nil)
	case p.Summary == "" || len(p.Summary) > 300:
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"summary" is required: one sentence of at most 300 characters saying what will happen.`, nil)
	case len(p.Reason) > 2000:
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"reason" must be at most 2000 characters.`, nil)
	case len(p.IdempotencyKey) > 200:
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, "The Idempotency-Key header is longer than 200 characters.", nil)
	}
	if p.CallbackURL != "" {
		u, err := url.Parse(p.CallbackURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"callback_url" must be an absolute http(s) URL.`, nil)
		}
		if err := s.checkCallbackHost(ctx, u.Hostname()); err != nil {
			return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"callback_url": `+err.Error()+".", nil)
		}
	}
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage(`{}`)
	}
	var tp *tools.Tool
	t, err := catalog.Get(ctx, s.o.DB.Read(), p.Tool)
	switch {
	case err == nil:
		tp = &t
		if err := catalog.ForTenant(ctx, s.o.DB.Read(), tp, p.Caller.Tenant.ID); err != nil {
			return approvals.Action{}, refuse(journeys.CodeInternal, "The tool catalog cannot be read.", err)
		}
	case !errors.Is(err, store.ErrNotFound):
		return approvals.Action{}, refuse(journeys.CodeInternal, "The tool catalog cannot be read.", err)
	}
	d := policy.Check(p.Caller.Key, p.Tool, tp, p.Arguments)
	if !d.Allowed {
		s.auditProposalViolation(ctx, p, d)
		return approvals.Action{}, d.Refusal()
	}
	// What approvers decide on comes from the call itself, not from what
	// the agent says about it: the amount the tool declares is the amount
	// (parsed once, strictly, by policy), and the headline is Warden's
	// sentence about the call for every tool. The agent's summary is kept
	// apart, shown attributed to the agent: "Refund $1.00, pre-approved by
	// Finance" on a lookup_order call must not read as what will happen.
	amount, err := proposedAmount(p, d.Facts)
	if err != nil {
		return approvals.Action{}, err
	}
	if err := s.o.Journeys.CheckCall(ctx, t, p.Arguments, p.Caller.Tenant.Slug); err != nil {
		return approvals.Action{}, err
	}
	// The tenant's allow-list keeps its catalogue terms, brands and places
	// readable in what approvers read of the call.
	red := allowlist.Redactor(ctx, s.o.DB.Read(), s.o.Redactor, p.Caller.Tenant.ID)
	shown := approvals.Show(red, catalog.ForApproval(t), p.Arguments, amount, d.Facts.Target)
	target, summary := shown.Target, shown.Headline
	digest, err := approvals.PayloadDigest(t.Name, p.Arguments)
	if err != nil {
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, "The arguments are not valid JSON.", nil)
	}
	key := "ext_" + store.NewID()
	if p.IdempotencyKey != "" {
		sum := sha256.Sum256([]byte(p.Caller.Key.ID + "|" + p.IdempotencyKey))
		key = "ext_" + hex.EncodeToString(sum[:16])
		if existing, err := approvals.ByIdempotencyKey(ctx, s.o.DB.Read(), key); err == nil {
			if existing.PayloadDigest != digest {
				return approvals.Action{}, refuse(journeys.CodeIdempotencyMismatch, "This Idempotency-Key was used for another proposal.", nil)
			}
			return existing, nil
		}
	}
	rule := d.Rule
	if rule == "" {
		rule = fmt.Sprintf("the agent asked for approval of a %s-impact call", t.Impact)
	}
	spec := approvals.Spec{
		TenantID: p.Caller.Tenant.ID, TenantSlug: p.Caller.Tenant.Slug, KeyID: p.Caller.Key.ID,
		KeyOwner: approvals.KeyOwner(p.Caller.Key.CreatedBy), Tool: catalog.ForApproval(t), Args: p.Arguments,
		ArgsRedacted: shown.Args, Summary: summary, AgentSummary: red.String(p.Summary),
		Targets: shown.Targets,
		Reason:  red.String(p.Reason), Rule: rule, IdempotencyKey: key, CallbackURL: p.CallbackURL,
		CallbackURLShown: s.redactURL(p.CallbackURL),
		External:         t.Provider == tools.ProviderExternal, Target: target,
	}
	if amount != nil {
		spec.AmountMinor, spec.Currency, spec.Total = &amount.Minor, amount.Currency.Code, d.Facts.Total
	}
	var a approvals.Action
	err = s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		req, err := approvals.Required(ctx, tx, p.Caller.Tenant.ID, amount, target, s.o.Now())
		if err != nil {
			return err
		}
		spec.ApprovalsRequired, spec.ApprovalBasis = req.Approvals, req.Basis
		a, err = approvals.Create(ctx, tx, s.o.Sealer, spec, s.o.Now())
		return err
	})
	if isDuplicateKey(err) {
		// A concurrent retry with the same Idempotency-Key won the insert.
		if existing, gerr := approvals.ByIdempotencyKey(ctx, s.o.DB.Read(), key); gerr == nil && existing.PayloadDigest == digest {
			return existing, nil
		}
	}
	if p, ok := approvals.ExceedsRefundable(err); ok {
		return approvals.Action{}, p
	}
	if err != nil {
		return approvals.Action{}, refuse(journeys.CodeInternal, "The proposal could not be recorded.", err)
	}
	return a, nil
}

// redactURL keeps a URL's scheme, host and path, and redacts its query
// and fragment, which may carry personal data or a token.
func (s *Service) redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return ""
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i, v := range vs {
				vs[i] = s.o.Redactor.Token("query", v)
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment = s.o.Redactor.Token("fragment", u.Fragment)
	}
	u.Path = s.o.Redactor.String(u.Path)
	return u.String()
}

// proposedAmount reconciles the agent's top-level amount and currency with
// the amount the tool declares. Where the tool declares one, that is the
// amount, and a top-level amount must agree with it; where it declares
// none, the agent's own amount (strictly parsed, with a currency) is shown
// and weighed by dual control, which can only add approvers.
func proposedAmount(p Proposal, f policy.Facts) (*money.Amount, error) {
	var stated *money.Amount
	if len(p.Amount) > 0 && string(p.Amount) != "null" {
		minor, err := money.ParseMinor(p.Amount)
		if err != nil {
			return nil, problem.Invalid(policy.CodeInvalidArguments, `"amount" `+err.Error()+".")
		}
		c, err := money.ParseCurrency(p.Currency)
		if err != nil {
			return nil, refuse(journeys.CodeInvalidInput, `"currency" must be an ISO 4217 code such as USD when "amount" is given.`, nil)
		}
		stated = &money.Amount{Minor: minor, Currency: c}
	} else if p.Currency != "" {
		if _, err := money.ParseCurrency(p.Currency); err != nil {
			return nil, refuse(journeys.CodeInvalidInput, `"currency" must be an ISO 4217 code such as USD.`, nil)
		}
	}
	switch {
	case f.Amount == nil:
		return stated, nil
	case stated != nil && stated.Minor != f.Amount.Minor:
		return nil, refuse(journeys.CodeInvalidInput, `"amount" differs from the amount in the arguments.`, nil)
	case p.Currency != "" && p.Currency != f.Amount.Currency.Code:
		return nil, refuse(journeys.CodeInvalidInput, `"currency" differs from the currency in the arguments.`, nil)
	}
	return f.Amount, nil
}

// isDuplicateKey reports a lost race on an action's unique idempotency key.
func isDuplicateKey(err error) bool {
	return store.IsUniqueViolation(err, "actions", "idempotency_key")
}

func (s *Service) auditProposalViolation(ctx context.Context, p Proposal, d policy.Decision) {
	// The work is done: record it even if the caller went away.
	ctx = context.WithoutCancel(ctx)
	err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorKey, ID: p.Caller.Key.ID}, Tenant: p.Caller.Tenant.Slug, Verb: "policy.violation",
			Subject: audit.Subject{Type: "tool", ID: p.Tool},
			Details: map[string]any{"code": d.Code, "tool": p.Tool, "reason": s.o.Redactor.String(d.Reason), "via": "POST /v1/actions"},
		})
		return err
	})
	if err != nil {
		s.o.Log.ErrorContext(ctx, "could not audit a policy violation", "err", err)
	}
}

// Result is what an external agent reports after executing an approved
// action itself.
type Result struct {
	Status  string          // "executed" or "failed"
	Receipt json.RawMessage // for executed
	Error   string          // for failed
}

// ReportResult records an external agent's outcome of an approved action.
func (s *Service) ReportResult(ctx context.Context, caller admission.Caller, actionID string, r Result) (approvals.Action, error) {
	if r.Status != approvals.StatusExecuted && r.Status != approvals.StatusFailed {
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"status" must be "executed" or "failed".`, nil)
	}
	if r.Status == approvals.StatusFailed && strings.TrimSpace(r.Error) == "" {
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, `A failed result needs an "error" saying what went wrong.`, nil)
	}
	if len(r.Receipt) == 0 {
		r.Receipt = json.RawMessage(`{}`)
	}
	if !json.Valid(r.Receipt) {
		return approvals.Action{}, refuse(journeys.CodeInvalidInput, `"receipt" must be JSON.`, nil)
	}
	a, err := approvals.Get(ctx, s.o.DB.Read(), actionID)
	if err != nil {
		return approvals.Action{}, err
	}
	if a.KeyID != caller.Key.ID {
		return approvals.Action{}, approvals.ErrNotFound // another key's action is not this caller's to know of
	}
	err = s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		return approvals.AgentReported(ctx, tx, a, caller.Tenant.Slug, approvals.Report{KeyID: caller.Key.ID, Status: r.Status,
			Receipt: json.RawMessage(s.redactJSON(r.Receipt)), Error: s.o.Redactor.String(r.Error)}, s.o.Now())
	})
	if err != nil {
		return a, err
	}
	s.notify()
	return approvals.Get(ctx, s.o.DB.Read(), a.ID)
}

// CancelAction withdraws the caller's pending action.
func (s *Service) CancelAction(ctx context.Context, caller admission.Caller, actionID string) (approvals.Action, error) {
	a, err := approvals.Cancel(ctx, s.o.DB, actionID, caller.Key.ID, s.onDecided, s.o.Now())
	if err == nil {
		s.notify()
	}
	return a, err
}
