package approvals

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/redact"
	"golang.org/x/text/unicode/norm"
)

// What an approver reads of a call: the headline, the targets, the target
// dual control counts on. Warden writes all of it from the call itself;
// the agent's own words are kept apart (Action.AgentSummary).

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

// Headline is the headline an approver reads: what will happen, to whom,
// always written by Warden from the call, never by the agent. amount is
// the call's declared amount (nil when it has none), target the label of
// its declared target ("" when none). The three built-in tools that need
// approval have sentences of their own; any other tool reads "Call TOOL
// on TARGET for AMOUNT", without the parts it lacks. Account numbers show
// their last four digits only.
func Headline(tool string, args json.RawMessage, amount *money.Amount, target string) string {
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

// Targets are what an approver is told the call touches ("order:ORD-1005",
// "account:••9182"), read from the arguments of the built-in tools.
func Targets(args json.RawMessage) []string {
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

// Shown is what people read of a call, from the call itself: its
// arguments redacted, Warden's headline, the targets, the target dual
// control counts on.
type Shown struct {
	Args     json.RawMessage
	Headline string
	Targets  []string
	Target   Target
}

// Show writes what people read of a call of t with args, for every door
// (POST /v1/actions, a journey's step, the MCP door, a reversal): the
// fields t declares personal (Tool.Personal) are tokenised whole, with the
// token detection would write for the value, in the redacted arguments,
// the headline, the targets and the target's label; the rest is redacted
// as usual. amount is the call's declared amount (nil: none), target the
// value of its declared target ("" when none).
func Show(r *redact.Redactor, t Tool, args json.RawMessage, amount *money.Amount, target string) Shown {
	seen := json.RawMessage(r.Declare(args, t.Personal))
	sh := Shown{Args: json.RawMessage(r.JSONTextDeclared(args, t.Personal)), Targets: Targets(seen), Target: TargetOf(r, target)}
	if k := t.Personal.Kind(t.TargetArg); k != "" && target != "" {
		sh.Target.Label = r.Token(k, target)
	}
	sh.Headline = Headline(t.Name, seen, amount, sh.Target.Label)
	return sh
}

// TargetOf turns a call's declared target into what dual control matches
// on (a keyed digest, never the value) and what people read (redacted).
func TargetOf(r *redact.Redactor, value string) Target {
	if value == "" {
		return Target{}
	}
	return Target{Key: r.Digest("action-target", targetKey(value)), Label: r.String(value)}
}

// targetKey is the form of a target's value that dual control compares:
// Unicode-normalised, trimmed and case-folded, so "ORD-1004", "ord-1004"
// and " ORD-1004" add up as one target.
func targetKey(value string) string {
	return strings.ToLower(strings.TrimSpace(norm.NFKC.String(value)))
}

// KeyOwner is the principal a key's creator names, for the no-self-approval
// rule; keys made on the command line have none.
func KeyOwner(createdBy string) string {
	if createdBy == "cli" {
		return ""
	}
	return createdBy
}
