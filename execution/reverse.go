package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// Reverse asks for the business rollback of an executed, compensatable
// action: a new high-impact action for its compensating tool, under the
// stable key "compensates:<original key>", which needs approval like any
// other. The person must say why (ErrReverseReasonRequired): the reason
// is the reversal's, shown to its approvers as the requester's and kept in
// its action.requested event. Pressing it twice returns the same reversal.
func (s *Service) Reverse(ctx context.Context, p identity.Principal, actionID, reason string) (approvals.Action, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return approvals.Action{}, ErrReverseReasonRequired
	case utf8.RuneCountInString(reason) > approvals.MaxCommentLen:
		return approvals.Action{}, approvals.ErrCommentTooLong
	}
	orig, err := approvals.Get(ctx, s.o.DB.Read(), actionID)
	if err != nil {
		return approvals.Action{}, err
	}
	slug, err := tenants.SlugOf(ctx, s.o.DB.Read(), orig.TenantID)
	if err != nil {
		return approvals.Action{}, err
	}
	if err := approvals.MayReverse(p, orig, slug); err != nil {
		return approvals.Action{}, err
	}
	// A live reversal (pending, approved, executing or executed) is the
	// answer to pressing again; a finished one (rejected, expired,
	// cancelled, failed) does not stop a new request.
	earlier, err := approvals.Compensations(ctx, s.o.DB.Read(), orig.ID)
	if err != nil {
		return approvals.Action{}, err
	}
	for _, e := range earlier {
		if approvals.Live(e.Status) {
			return e, nil
		}
	}
	key := "compensates:" + orig.IdempotencyKey
	if len(earlier) > 0 {
		key += fmt.Sprintf(":%d", len(earlier)+1)
	}
	t, err := catalog.Get(ctx, s.o.DB.Read(), orig.Tool)
	if err != nil {
		return approvals.Action{}, err
	}
	comp, err := catalog.Get(ctx, s.o.DB.Read(), t.CompensatingTool)
	if err != nil {
		return approvals.Action{}, fmt.Errorf("compensating tool %q: %w", t.CompensatingTool, err)
	}
	// A reversal whose tool is switched off could only fail once approved:
	// refuse it now, saying why, rather than ask an approver for nothing.
	if !comp.Enabled {
		return approvals.Action{}, ErrCompensationOff(comp.Name)
	}
	origArgs, err := approvals.OpenArgs(ctx, s.o.DB.Read(), s.o.Sealer, orig.ID)
	if err != nil {
		return approvals.Action{}, err
	}
	// The ledger keeps the provider's receipt redacted but with its
	// reference ids (the refund id the compensating call needs); the
	// action shows a redacted copy.
	receipt := orig.Receipt
	if e, err := ledger.Get(ctx, s.o.DB.Read(), orig.IdempotencyKey); err == nil && len(e.Receipt) > 0 {
		receipt = e.Receipt
	}
	args, err := compensationArgs(comp, receipt, origArgs)
	if err != nil {
		return approvals.Action{}, err
	}
	// The reversal belongs to the person who asked for it, not to the
	// agent whose action it undoes: it carries no key, so no agent can
	// cancel it, and it sends no agent a callback.
	spec := approvals.Spec{
		TenantID: orig.TenantID, TenantSlug: slug, RequestedBy: p.ID, Tool: catalog.ForApproval(comp),
		Args: args, ArgsRedacted: json.RawMessage(s.o.Redactor.JSONTextDeclared(args, comp.Personal())),
		Summary: "Reverse: " + orig.Summary, Targets: orig.Targets, AmountMinor: orig.AmountMinor, Currency: orig.Currency,
		Reason:      s.o.Redactor.String(reason),
		Rule:        "compensating action of " + orig.ID + " (impact class high)",
		Compensates: orig.ID, IdempotencyKey: key,
	}
	amount, hasAmount := orig.Amount()
	var a approvals.Action
	err = s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		var am *money.Amount
		if hasAmount {
			am = &amount
		}
		facts, _ := policy.ReadFacts(comp, args)
		target := approvals.Show(s.o.Redactor, catalog.ForApproval(comp), args, am, facts.Target).Target
		req, err := approvals.Required(ctx, tx, orig.TenantID, am, target, s.o.Now())
		if err != nil {
			return err
		}
		spec.Target, spec.ApprovalsRequired, spec.ApprovalBasis = target, req.Approvals, req.Basis
		a, err = approvals.Create(ctx, tx, s.o.Sealer, spec, s.o.Now())
		return err
	})
	if isDuplicateKey(err) {
		return approvals.ByIdempotencyKey(ctx, s.o.DB.Read(), key) // pressed twice at once: the same reversal
	}
	return a, err
}

// ErrReverseReasonRequired refuses a reversal nobody said why for.
var ErrReverseReasonRequired = problem.Unprocessable("reason_required", "Say why this action is reversed: the reason is shown to the reversal's approvers and kept in the audit trail.")

// ErrCompensationOff refuses a reversal whose compensating tool is
// switched off (409 tool_disabled); nothing is created.
func ErrCompensationOff(tool string) *problem.Error {
	return problem.Conflict(policy.CodeDisabled, fmt.Sprintf("The compensating tool %s is switched off, so this action cannot be reversed now. Nothing was requested; switch %s on again (Kill switches), then reverse.", tool, tool)).
		Titled("The reversal's tool is switched off")
}

// compensationArgs builds the compensating tool's arguments from the
// original's receipt and arguments: each property the compensating tool's
// schema names is taken from the receipt, or else from the original call.
func compensationArgs(comp tools.Tool, receipt, origArgs json.RawMessage) (json.RawMessage, error) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(comp.ArgsSchema, &schema)
	var rec, orig map[string]json.RawMessage
	_ = json.Unmarshal(receipt, &rec)
	_ = json.Unmarshal(origArgs, &orig)
	out := map[string]json.RawMessage{}
	for name := range schema.Properties {
		if v, ok := rec[name]; ok {
			out[name] = v
		} else if v, ok := orig[name]; ok {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cannot build the arguments of %s from the original's receipt", comp.Name)
	}
	return json.Marshal(out)
}
