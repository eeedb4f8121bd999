package mcpshop_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/tools/sim/mcpshop"
)

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// The shop answers over Streamable HTTP with the Go SDK's client: a
// lookup names the order's amount and the customer's e-mail, a refund is
// recorded once, and a refund of more than what is left, in another
// currency or of an unknown order is a tool error that refunds nothing;
// every call is counted.
func TestShopLooksUpAndRefundsWithinTheTotal(t *testing.T) {
	shop := mcpshop.New()
	srv := httptest.NewServer(shop.Handler())
	defer srv.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "issue_refund,lookup_order" {
		t.Fatalf("tools = %v", names)
	}

	text, isErr := call(t, cs, mcpshop.ToolLookupOrder, map[string]any{"order_id": "ord-1008"})
	var o mcpshop.Order
	if err := json.Unmarshal([]byte(text), &o); isErr || err != nil {
		t.Fatalf("lookup = %q (error %v, %v)", text, isErr, err)
	}
	if o.OrderID != "ORD-1008" || o.AmountMinor != 124900 || o.Currency != "USD" || o.CustomerEmail != "lotte.peeters@example.com" || o.AccountLast4 != "6343" {
		t.Fatalf("lookup = %+v", o)
	}
	if _, isErr := call(t, cs, mcpshop.ToolLookupOrder, map[string]any{"order_id": "ORD-9"}); !isErr {
		t.Fatal("an unknown order is not a tool error")
	}

	text, isErr = call(t, cs, mcpshop.ToolIssueRefund, map[string]any{"order_id": "ORD-1008", "amount_minor": 100000, "currency": "USD", "reason": "cracked screen"})
	if isErr || !strings.Contains(text, `"refund_id":"rf_shop_1"`) {
		t.Fatalf("refund = %q (error %v)", text, isErr)
	}
	for _, bad := range []map[string]any{
		{"order_id": "ORD-1008", "amount_minor": 24901, "currency": "USD"}, // 24,900 left
		{"order_id": "ORD-1008", "amount_minor": 100, "currency": "EUR"},
		{"order_id": "ORD-0000", "amount_minor": 100, "currency": "USD"},
		{"order_id": "ORD-1008", "amount_minor": 0, "currency": "USD"},
	} {
		if text, isErr := call(t, cs, mcpshop.ToolIssueRefund, bad); !isErr {
			t.Errorf("refund %v = %q, want a tool error", bad, text)
		}
	}
	if text, isErr := call(t, cs, mcpshop.ToolIssueRefund, map[string]any{"order_id": "ORD-1008", "amount_minor": 24900, "currency": "USD"}); isErr {
		t.Fatalf("the rest of the order = %q, want refunded", text)
	}
	text, _ = call(t, cs, mcpshop.ToolLookupOrder, map[string]any{"order_id": "ORD-1008"})
	if !strings.Contains(text, `"refunded_minor":124900`) {
		t.Errorf("lookup after refunds = %s, want refunded_minor 124900", text)
	}
	if r := shop.Refunds(); len(r) != 2 || r[0].AmountMinor != 100000 || r[1].AmountMinor != 24900 || r[0].Reason != "cracked screen" {
		t.Errorf("refunds = %+v", r)
	}
	if shop.RefundCalls() != 6 || shop.LookupCalls() != 3 {
		t.Errorf("calls: %d refunds, %d lookups; want 6 and 3", shop.RefundCalls(), shop.LookupCalls())
	}
}
