package runtime

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/agent/budget"
	"github.com/wardenhq/warden/agent/redact"
	"github.com/wardenhq/warden/agent/skills"
	"github.com/wardenhq/warden/approvals"
)

// settle charges the journey's cost against its reservation and releases
// the rest.
func settle(ctx context.Context, tx *sql.Tx, j *Journey) error {
	return budget.Settle(ctx, tx, j.TenantID, j.ReservedMicros, j.Cost.TotalMicros)
}

// callFacts are the parts of a call's arguments people decide on.
type callFacts struct {
	OrderID     string `json:"order_id"`
	AmountMinor *int64 `json:"amount_minor"`
	Currency    string `json:"currency"`
	Account     string `json:"account"`
	To          string `json:"to"`
	RefundID    string `json:"refund_id"`
	Subject     string `json:"subject"`
}

// Summary is the sentence an approver reads: what will happen, to whom.
// Account numbers show their last four digits only.
func Summary(tool string, args json.RawMessage) string {
	var f callFacts
	_ = json.Unmarshal(args, &f)
	money := ""
	if f.AmountMinor != nil {
		money = skills.FormatMoney(*f.AmountMinor, f.Currency)
	}
	switch tool {
	case "issue_refund":
		s := "Refund " + money
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
	if f.OrderID != "" {
		s += " for order " + f.OrderID
	}
	if money != "" {
		s += " (" + money + ")"
	}
	return s
}

// shortMask shows an account's last four digits behind two dots, the way
// approvers read it in a sentence: "••9182".
func shortMask(account string) string {
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

// createAction turns the journey's pending call into a pending action.
func (s *Service) createAction(ctx context.Context, tx *sql.Tx, r *run, now time.Time) (approvals.Action, error) {
	p := r.pending
	var f callFacts
	_ = json.Unmarshal(p.args, &f)
	required, err := approvalsRequired(ctx, tx, r.j.TenantID, f.AmountMinor)
	if err != nil {
		return approvals.Action{}, err
	}
	return approvals.Create(ctx, tx, s.o.Sealer, approvals.Spec{
		TenantID: r.j.TenantID, TenantSlug: r.j.TenantSlug, JourneyID: r.j.ID, StepN: p.n, KeyID: r.j.KeyID,
		Tool: p.tool, Args: p.args, ArgsRedacted: json.RawMessage(s.redactJSON(p.args)),
		Summary: Summary(p.tool.Name, p.args), Targets: targets(p.args),
		AmountMinor: f.AmountMinor, Currency: f.Currency, Reason: s.o.Redactor.String(p.reason),
		Rule: p.rule, ApprovalsRequired: required,
	}, now)
}

// approvalsRequired applies the tenant's dual-control threshold: amounts
// at or above it need two distinct approvers.
func approvalsRequired(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, tenantID string, amount *int64) (int, error) {
	var threshold int64
	if err := q.QueryRowContext(ctx, `SELECT dual_control_minor FROM tenants WHERE id = ?`, tenantID).Scan(&threshold); err != nil {
		return 0, fmt.Errorf("dual-control threshold: %w", err)
	}
	if amount != nil && threshold > 0 && *amount >= threshold {
		return 2, nil
	}
	return 1, nil
}
