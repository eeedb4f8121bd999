package fakeupstream

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRefundAgentPlaysLookupRefundReport(t *testing.T) {
	srv := httptest.NewServer(New())
	defer srv.Close()
	tools := `"tools":[{"type":"function","function":{"name":"lookup_order"}},{"type":"function","function":{"name":"refund"}}]`
	user := `{"role":"user","content":"Refund ORD-1008, the laptop arrived broken"}`
	lookupCall := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_lookup_order","type":"function","function":{"name":"lookup_order","arguments":"{}"}}]}`
	lookupResult := `{"role":"tool","tool_call_id":"call_lookup_order","content":"{\"order_id\":\"ORD-1008\",\"amount_minor\":124900,\"currency\":\"USD\",\"account_last4\":\"6343\"}"}`
	refundCall := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_refund","type":"function","function":{"name":"refund","arguments":"{}"}}]}`
	refundResult := `{"role":"tool","tool_call_id":"call_refund","content":"executed: rf_1"}`
	tests := []struct {
		name, messages string
		stream         bool
		contains       []string
	}{
		{"lookup first", user, false, []string{`"name":"lookup_order"`, `\"order_id\":\"ORD-1008\"`, `"finish_reason":"tool_calls"`}},
		{"then refund", user + "," + lookupCall + "," + lookupResult, false,
			[]string{`"name":"refund"`, `\"amount_minor\":124900`, `\"account\":\"6343\"`, `\"currency\":\"USD\"`, `\"reason\":\"Refund ORD-1008, the laptop arrived broken\"`}},
		{"then report", user + "," + lookupCall + "," + lookupResult + "," + refundCall + "," + refundResult, false,
			[]string{`"content":"Refund outcome: executed: rf_1"`, `"finish_reason":"stop"`}},
		{"streamed refund", user + "," + lookupCall + "," + lookupResult, true, []string{`"name":"refund"`, `"usage":{`, "data: [DONE]"}},
		{"no order id", `{"role":"user","content":"refund please"}`, false, []string{`"content":"Which order? Name it like ORD-1008."`}},
	}
	// Through Warden's /mcp door the tools are SERVER__TOOL, and an MCP
	// tool's schema declares its arguments: only those are sent.
	mcpTools := `"tools":[{"type":"function","function":{"name":"shop__lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}}}}},` +
		`{"type":"function","function":{"name":"shop__issue_refund","parameters":{"type":"object","properties":{"order_id":{},"amount_minor":{},"currency":{},"reason":{}},"additionalProperties":false}}}]`
	for _, tc := range []struct {
		name, messages  string
		contains, lacks []string
	}{
		{"MCP lookup first", user, []string{`"name":"shop__lookup_order"`, `\"order_id\":\"ORD-1008\"`}, nil},
		{"MCP refund with the declared arguments", user + "," + strings.ReplaceAll(lookupCall, `"lookup_order"`, `"shop__lookup_order"`) + "," + lookupResult,
			[]string{`"name":"shop__issue_refund"`, `\"amount_minor\":124900`, `\"currency\":\"USD\"`, `\"reason\":`}, []string{`account`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, got := post(t, srv, `{"model":"refund-agent","messages":[`+tc.messages+`],`+mcpTools+"}")
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, got)
			}
			for _, c := range tc.contains {
				if !strings.Contains(got, c) {
					t.Errorf("answer lacks %s:\n%s", c, got)
				}
			}
			for _, c := range tc.lacks {
				if strings.Contains(got, c) {
					t.Errorf("answer has %s:\n%s", c, got)
				}
			}
		})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"refund-agent","messages":[` + tc.messages + `],` + tools
			if tc.stream {
				body += `,"stream":true,"stream_options":{"include_usage":true}`
			}
			res, got := post(t, srv, body+"}")
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, got)
			}
			for _, c := range tc.contains {
				if !strings.Contains(got, c) {
					t.Errorf("answer lacks %s:\n%s", c, got)
				}
			}
		})
	}
}
