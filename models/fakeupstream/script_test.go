package fakeupstream

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The scripted models decide from the conversation so far, and the fake
// records every request it saw.
func TestScriptedModels(t *testing.T) {
	f := New()
	srv := httptest.NewServer(f)
	defer srv.Close()
	const tools = `"tools":[{"type":"function","function":{"name":"lookup_order"}},{"type":"function","function":{"name":"issue_refund"}}]`
	const lookup = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"lookup_order","arguments":"{}"}}]}`
	const refund = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_4","type":"function","function":{"name":"issue_refund","arguments":"{}"}}]}`
	const user = `{"role":"system","content":"s"},{"role":"user","content":"refund ORD-1004"}`
	tests := []struct {
		name, body string
		contains   []string
	}{
		{"refund: first the lookup", `{"model":"script-refund",` + tools + `,"messages":[` + user + `]}`,
			[]string{`"name":"lookup_order"`, `\"order_id\":\"ORD-1004\"`}},
		{"refund: then the whole order", `{"model":"script-refund",` + tools + `,"messages":[` + user + `,` + lookup +
			`,{"role":"tool","tool_call_id":"call_2","content":"{\"order_id\":\"ORD-1004\",\"amount_minor\":240000,\"currency\":\"USD\",\"account\":\"GB74\"}"}]}`,
			[]string{`"name":"issue_refund"`, `\"amount_minor\":240000`, `\"account\":\"GB74\"`}},
		{"refund: then an answer", `{"model":"script-refund",` + tools + `,"messages":[` + user + `,` + refund +
			`,{"role":"tool","tool_call_id":"call_4","content":"{}"}]}`,
			[]string{`"content":"The refund for ORD-1004 is done (issue_refund answered)."`, `"finish_reason":"stop"`}},
		{"outside the list", `{"model":"script-outside",` + tools + `,"messages":[` + user + `]}`,
			[]string{`"name":"send_customer_email"`}},
		{"loop", `{"model":"script-loop",` + tools + `,"messages":[` + user + `,` + lookup + `,{"role":"tool","tool_call_id":"call_2","content":"{}"}]}`,
			[]string{`"name":"lookup_order"`}},
		{"router", `{"model":"router","messages":[{"role":"system","content":"Skills:\n- order_status: Where an order is.\n- refunds: Refund money for an order.\n"},{"role":"user","content":"please refund my money"}]}`,
			[]string{`"content":"refunds"`}},
		{"router naming no offered skill", `{"model":"router-unknown","messages":[{"role":"user","content":"x"}]}`,
			[]string{`"content":"no_such_skill"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := post(t, srv, tt.body)
			if res.StatusCode != 200 {
				t.Fatalf("status = %d: %s", res.StatusCode, body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(body, c) {
					t.Errorf("body lacks %s: %s", c, body)
				}
			}
		})
	}
	var got []int
	for _, s := range f.Seen() {
		got = append(got, s.Messages)
	}
	if !slices.Equal(got, []int{2, 4, 4, 2, 4, 2, 1}) {
		t.Errorf("Seen() message counts = %v", got)
	}
}
