package approvals

import (
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/platform/money"
)

func TestTargetKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ORD-1004", "ord-1004"},
		{" ord-1004 ", "ord-1004"},
		{"ＯＲＤ-１００４", "ord-1004"}, // full-width letters and digits
		{"acct-77", "acct-77"},
	} {
		if got := targetKey(tt.in); got != tt.want {
			t.Errorf("targetKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestShortMaskToken: a redacted account shows no digits; the token's hex
// is not the account's last four.
func TestShortMaskToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"GB33BUKB20201555559182", "••9182"},
		{"[iban:d38bf348]", "••"},
		{"[iban:12345678]", "••"},
		// An agent that sends only the last four digits (the OpenAI
		// Agents SDK example does) showed approvers "to account ••".
		{"9182", "••9182"},
		{"918", "••"},
		{"91a2", "••"},
	}
	for _, tt := range tests {
		if got := shortMask(tt.in); got != tt.want {
			t.Errorf("shortMask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The headline is Warden's sentence from the call: the three tools with
// sentences of their own, and "Call TOOL on TARGET for AMOUNT" without
// the parts a call lacks for any other (issue 21, finding 6). Nothing the
// agent says reaches it.
func TestHeadlineIsWrittenFromTheCall(t *testing.T) {
	usd := &money.Amount{Minor: 124_900, Currency: money.MustCurrency("USD")}
	tests := []struct {
		tool   string
		args   string
		amount *money.Amount
		target string
		want   string
	}{
		{"issue_refund", `{"order_id":"ORD-1008","account":"GB74BUKB20201555559182"}`, usd, "ORD-1008", "Refund $1,249.00 to account ••9182 for order ORD-1008"},
		{"send_payout", `{"payee":"acct-77"}`, usd, "acct-77", "Call send_payout on acct-77 for $1,249.00"},
		{"lookup_order", `{"order_id":"ORD-1003"}`, nil, "", "Call lookup_order"},
		{"lookup_order", `{"order_id":"ORD-1003"}`, &money.Amount{Minor: 100, Currency: money.MustCurrency("USD")}, "", "Call lookup_order for $1.00"},
		{"close_ticket", `{"ticket":"T-1"}`, nil, "T-1", "Call close_ticket on T-1"},
	}
	for _, tt := range tests {
		if got := Headline(tt.tool, json.RawMessage(tt.args), tt.amount, tt.target); got != tt.want {
			t.Errorf("Headline(%s, %s) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}
