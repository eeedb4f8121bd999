package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

func TestReadFacts(t *testing.T) {
	refund := tools.Tool{Name: "issue_refund", AmountArg: "amount_minor", CurrencyArg: "currency", TargetArg: "order_id"}
	email := tools.Tool{Name: "send_customer_email", TargetArg: "order_id"}
	withMinimum := refund
	withMinimum.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"amount_minor":{"type":"integer","minimum":1}}}`)
	tests := []struct {
		name       string
		tool       tools.Tool
		args       string
		wantMinor  int64 // -1: no amount
		wantCode   string
		wantTarget string
		wantErr    string
	}{
		{"refund", refund, `{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD"}`, 240000, "USD", "ORD-1004", ""},
		{"three decimals", refund, `{"order_id":"O","amount_minor":1000,"currency":"KWD"}`, 1000, "KWD", "O", ""},
		{"fraction", refund, `{"order_id":"O","amount_minor":500000.0,"currency":"USD"}`, 0, "", "", `"amount_minor" must be a whole number`},
		{"exponent", refund, `{"order_id":"O","amount_minor":1e5,"currency":"USD"}`, 0, "", "", `"amount_minor" must be a whole number`},
		{"string", refund, `{"order_id":"O","amount_minor":"500000","currency":"USD"}`, 0, "", "", `"amount_minor" must be a whole number`},
		{"beyond int64", refund, `{"order_id":"O","amount_minor":9223372036854775808,"currency":"USD"}`, 0, "", "", `"amount_minor" must be a whole number`},
		{"negative", refund, `{"order_id":"O","amount_minor":-5,"currency":"USD"}`, 0, "", "", `"amount_minor" must be a whole number`},
		{"amount missing", refund, `{"order_id":"O","currency":"USD"}`, 0, "", "", `"amount_minor" is required`},
		{"unknown currency", refund, `{"order_id":"O","amount_minor":5,"currency":"ZZZ"}`, 0, "", "", `"currency" must be an ISO 4217`},
		{"currency missing", refund, `{"order_id":"O","amount_minor":5}`, 0, "", "", `"currency" is required`},
		{"target missing", refund, `{"amount_minor":5,"currency":"USD"}`, 0, "", "", `"order_id" is required`},
		{"numeric target", email, `{"order_id":42}`, -1, "", "42", ""},
		{"target neither string nor number", email, `{"order_id":{"id":1}}`, 0, "", "", `"order_id" must be a non-empty string`},
		{"no amount declared", email, `{"order_id":"ORD-1","amount_minor":1.5}`, -1, "", "ORD-1", ""},
		{"nothing declared", tools.Tool{Name: "x"}, `{"amount":1.5}`, -1, "", "", ""},
		// The message states the schema's own minimum, and that minimum
		// holds here too.
		{"no schema minimum", refund, `{"order_id":"O","amount_minor":1.0,"currency":"USD"}`, 0, "", "", `from 0 to 9007199254740991`},
		{"schema minimum 1", withMinimum, `{"order_id":"O","amount_minor":1.0,"currency":"USD"}`, 0, "", "", `from 1 to 9007199254740991`},
		{"below the schema minimum", withMinimum, `{"order_id":"O","amount_minor":0,"currency":"USD"}`, 0, "", "", `from 1 to 9007199254740991`},
		{"at the schema minimum", withMinimum, `{"order_id":"O","amount_minor":1,"currency":"USD"}`, 1, "USD", "O", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ReadFacts(tt.tool, json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadFacts(%s) error = %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadFacts(%s) = %v", tt.args, err)
			}
			switch {
			case tt.wantMinor < 0 && f.Amount != nil:
				t.Errorf("amount = %+v, want none", f.Amount)
			case tt.wantMinor >= 0 && (f.Amount == nil || f.Amount.Minor != tt.wantMinor || f.Amount.Currency.Code != tt.wantCode):
				t.Errorf("amount = %+v, want %d %s", f.Amount, tt.wantMinor, tt.wantCode)
			}
			if f.Target != tt.wantTarget {
				t.Errorf("target = %q, want %q", f.Target, tt.wantTarget)
			}
		})
	}
}

func TestUniqueMembers(t *testing.T) {
	tests := []struct {
		args    string
		wantErr string
	}{
		{`{"amount_minor":100,"currency":"USD"}`, ""},
		{`{"a":{"b":1},"c":[{"b":2},{"b":3}]}`, ""},
		{`{"amount_minor":500000.0,"amount_minor":100}`, `"amount_minor" appears twice`},
		{`{"amount_minor":100,"AMOUNT_MINOR":500000}`, `differ only in case`},
		{`{"x":{"id":1,"id":2}}`, `"id" appears twice`},
		{`{"x":[{"Id":1,"id":2}]}`, `differ only in case`},
		{`{"x":`, `not JSON`},
	}
	for _, tt := range tests {
		err := UniqueMembers(json.RawMessage(tt.args))
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("UniqueMembers(%s) = %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

// Check refuses what ReadFacts refuses, as invalid_arguments, even when
// the tool's schema says "integer" (which 500000.0 satisfies).
func TestCheckRefusesAFractionalAmountTheSchemaAccepts(t *testing.T) {
	tool := tools.Tool{Name: "issue_refund", Enabled: true, Impact: risk.ImpactHigh, AmountArg: "amount_minor", CurrencyArg: "currency",
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"amount_minor":{"type":"integer"},"currency":{"type":"string"}}}`)}
	d := Check(allowAll{}, "issue_refund", &tool, json.RawMessage(`{"amount_minor":500000.0,"currency":"USD"}`))
	if d.Allowed || d.Code != CodeInvalidArguments {
		t.Errorf("Check = %+v, want invalid_arguments", d)
	}
}

type allowAll struct{}

func (allowAll) Allows(string, string) bool { return true }
