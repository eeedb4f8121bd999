package journeys

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/redact"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/money"
)

// settle charges the journey's cost, less what was charged elsewhere
// (precharged), against its reservation and releases the rest.
func settle(ctx context.Context, tx *sql.Tx, j *Journey, precharged int64) error {
	return budgets.Settle(ctx, tx, j.TenantID, j.ReservedMicros, j.Cost.TotalMicros-precharged)
}

// callFacts are the parts of a sim tool's arguments an approver's sentence
// names besides its amount. The amount is never read here: it comes from
// policy.ReadFacts, the one strict parse.
type callFacts struct {
	OrderID  string `json:"order_id"`
	Account  string `json:"account"`
	To       string `json:"to"`
	RefundID string `json:"refund_id"`
	Subject  string `json:"subject"`
}

// Summary is the headline an approver reads: what will happen, to whom,
// always written by Warden from the call, never by the agent. amount is
// the call's declared amount (nil when it has none), target the label of
// its declared target ("" when none). The three built-in tools that need
// approval have sentences of their own; any other tool reads "Call TOOL
// on TARGET for AMOUNT", without the parts it lacks. Account numbers show
// their last four digits only.
func Summary(tool string, args json.RawMessage, amount *money.Amount, target string) string {
	var f callFacts
	_ = json.Unmarshal(args, &f)
	shown := ""
	if amount != nil {
		shown = money.Format(*amount)
	}
	switch tool {
	case "issue_refund":
		s := "Refund " + shown
		if f.Account != "" {
			s += " to account " + shortMask(f.Account)
		}
		if f.OrderID != "" {
			s += " for order " + f.OrderID
		}
		return s
	case "reverse_refund":
		return "Reverse refund " + f.RefundID
	case "send_customer_email":
		s := "E-mail the customer"
		if f.OrderID != "" {
			s += " about order " + f.OrderID
		}
		if f.Subject != "" {
			s += fmt.Sprintf(": %q", f.Subject)
		}
		return s
	}
	s := "Call " + tool
	if target != "" {
		s += " on " + target
	}
	if shown != "" {
		s += " for " + shown
	}
	return s
}

// shortMask shows an account's last four digits behind two dots, the way
// approvers read it in a sentence: "••9182". A value holding a redaction
// token ("[iban:d38bf348]") has no account digits to show: the token's hex
// would read as some, so it is masked whole.
//
// An agent that knows only the account's last four digits may send just
// those ("9182"): they are shown as they are, since they are what the mask
// would show of the whole number.
func shortMask(account string) string {
	if strings.ContainsAny(account, "[]") {
		return "••"
	}
	if len(account) == 4 && strings.Trim(account, "0123456789") == "" {
		return "••" + account
	}
	return strings.Replace(redact.MaskLast4(account), "••••", "••", 1)
}

func targets(args json.RawMessage) []string {
	var f callFacts
	_ = json.Unmarshal(args, &f)
	var out []string
	if f.OrderID != "" {
		out = append(out, "order:"+f.OrderID)
	}
	if f.Account != "" {
		out = append(out, "account:"+shortMask(f.Account))
	}
	if f.RefundID != "" {
		out = append(out, "refund:"+f.RefundID)
	}
	if f.To != "" {
		out = append(out, "customer e-mail")
	}
	return out
}

// target turns a call's declared target into what dual control matches
// on (a keyed digest, never the value) and what people read.
func (s *Service) target(value string) approvals.Target {
	if value == "" {
		return approvals.Target{}
	}
	return approvals.Target{Key: s.o.Redactor.Digest("action-target", targetKey(value)), Label: s.o.Redactor.String(value)}
}

// targetKey is the form of a target's value that dual control compares:
// Unicode-normalised, trimmed and case-folded, so "ORD-1004", "ord-1004"
// and " ORD-1004" add up as one target.
func targetKey(value string) string {
	return strings.ToLower(strings.TrimSpace(norm.NFKC.String(value)))
}

// createAction turns the journey's pending call into a pending action.
func (s *Service) createAction(ctx context.Context, tx *sql.Tx, r *run, now time.Time) (approvals.Action, error) {
	p := r.pending
	target := s.target(p.facts.Target)
	// Dual control first: it takes the target's lock, the first of the
	// transaction's locks (approvals.Required).
	req, err := approvals.Required(ctx, tx, r.j.TenantID, p.facts.Amount, target, now)
	if err != nil {
		return approvals.Action{}, err
	}
	spec := approvals.Spec{
		TenantID: r.j.TenantID, TenantSlug: r.j.TenantSlug, JourneyID: r.j.ID, StepN: p.n, KeyID: r.j.KeyID,
		KeyOwner: keyOwner(r.req.Caller.Key.CreatedBy), Tool: catalog.ForApproval(p.tool), Args: p.args,
		ArgsRedacted: json.RawMessage(s.redactJSON(p.args)), Summary: Summary(p.tool.Name, p.args, p.facts.Amount, target.Label),
		Targets: targets(p.args), Reason: s.o.Redactor.String(p.reason), Rule: p.rule,
		ApprovalsRequired: req.Approvals, ApprovalBasis: req.Basis, Target: target,
	}
	if a := p.facts.Amount; a != nil {
		spec.AmountMinor, spec.Currency = &a.Minor, a.Currency.Code
	}
	return approvals.Create(ctx, tx, s.o.Sealer, spec, now)
}

// keyOwner is the principal a key's creator names, for the no-self-approval
// rule; keys made on the command line have none.
func keyOwner(createdBy string) string {
	if createdBy == "cli" {
		return ""
	}
	return createdBy
}
