package policy

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wardenhq/warden/agent/tools"
)

type scopes []string

func (s scopes) Allows(kind, name string) bool { return slices.Contains(s, kind+":"+name) }

func TestCheck(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string","pattern":"^ORD-[0-9]+$"}},"additionalProperties":false}`)
	lookup := &tools.Tool{Name: "lookup_order", Impact: tools.ImpactLow, Enabled: true, ArgsSchema: schema}
	refund := &tools.Tool{Name: "issue_refund", Impact: tools.ImpactHigh, Enabled: true, ArgsSchema: json.RawMessage(`{"type":"object"}`)}
	off := &tools.Tool{Name: "send_customer_email", Impact: tools.ImpactHigh, Enabled: false}
	key := scopes{"tool:lookup_order", "tool:issue_refund", "tool:send_customer_email"}
	good := json.RawMessage(`{"order_id":"ORD-1001"}`)

	tests := []struct {
		name     string
		scope    scopes
		tool     string
		t        *tools.Tool
		args     json.RawMessage
		allowed  bool
		approval bool
		code     string
	}{
		{"low tool in scope", key, "lookup_order", lookup, good, true, false, ""},
		{"unknown tool", key, "drop_tables", nil, good, false, false, CodeUnknownTool},
		{"not in scope", scopes{"tool:issue_refund"}, "lookup_order", lookup, good, false, false, CodeNotInScope},
		{"skill scope is not a tool scope", scopes{"skill:lookup_order"}, "lookup_order", lookup, good, false, false, CodeNotInScope},
		{"switched off", key, "send_customer_email", off, json.RawMessage(`{}`), false, false, CodeDisabled},
		{"missing argument", key, "lookup_order", lookup, json.RawMessage(`{}`), false, false, CodeInvalidArguments},
		{"wrong pattern", key, "lookup_order", lookup, json.RawMessage(`{"order_id":"1001"}`), false, false, CodeInvalidArguments},
		{"extra argument", key, "lookup_order", lookup, json.RawMessage(`{"order_id":"ORD-1","x":1}`), false, false, CodeInvalidArguments},
		{"not an object", key, "lookup_order", lookup, json.RawMessage(`["ORD-1"]`), false, false, CodeInvalidArguments},
		{"not JSON", key, "lookup_order", lookup, json.RawMessage(`{order`), false, false, CodeInvalidArguments},
		{"high impact needs approval", key, "issue_refund", refund, json.RawMessage(`{"amount_minor":1}`), true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Check(tt.scope, tt.tool, tt.t, tt.args)
			if d.Allowed != tt.allowed || d.NeedsApproval != tt.approval || d.Code != tt.code {
				t.Errorf("Check = allowed %v approval %v code %q; want %v %v %q (%s)", d.Allowed, d.NeedsApproval, d.Code, tt.allowed, tt.approval, tt.code, d.Reason)
			}
			if !d.Allowed && d.Reason == "" {
				t.Error("refusal without a reason")
			}
			if d.NeedsApproval && d.Rule != RuleHighImpact {
				t.Errorf("rule = %q", d.Rule)
			}
		})
	}
}

func TestCompileSchemaRejectsBadSchemas(t *testing.T) {
	for _, s := range []string{`{"type":"nonsense"}`, `{"required":"x"}`, `not json`} {
		if err := CompileSchema(json.RawMessage(s)); err == nil {
			t.Errorf("CompileSchema(%s) accepted a bad schema", s)
		}
	}
	if err := CompileSchema(nil); err != nil {
		t.Errorf("empty schema: %v", err)
	}
	if err := ValidateArgs(nil, json.RawMessage(`{"a":1}`)); err != nil {
		t.Errorf("empty schema accepts any object: %v", err)
	}
}
