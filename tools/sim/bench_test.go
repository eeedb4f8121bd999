package sim

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/wardenhq/warden/tools"
)

func BenchmarkExecuteLookupOrder(b *testing.B) {
	p := openTemp(b)
	t := tool(b, ToolLookupOrder)
	call := tools.Call{Tool: ToolLookupOrder, Args: json.RawMessage(`{"order_id":"ORD-1004"}`), Tenant: "acme"}
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Execute(ctx, t, call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteIssueRefund measures a new effect per call: a write
// transaction that checks the key, writes the refund and the effect row,
// and commits. Each refunds one cent, so the order's $2,400.00 cap allows
// 240,000 of them.
func BenchmarkExecuteIssueRefund(b *testing.B) {
	p := openTemp(b)
	t := tool(b, ToolIssueRefund)
	args := json.RawMessage(`{"order_id":"ORD-1004","amount_minor":1,"currency":"USD","account":"9182"}`)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		call := tools.Call{Tool: ToolIssueRefund, Args: args, IdempotencyKey: "bench-" + strconv.Itoa(i), Tenant: "acme"}
		if _, err := p.Execute(ctx, t, call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteIssueRefundReplay measures a repeated key: the path a
// retry or crash recovery takes.
func BenchmarkExecuteIssueRefundReplay(b *testing.B) {
	p := openTemp(b)
	t := tool(b, ToolIssueRefund)
	call := tools.Call{Tool: ToolIssueRefund, Args: json.RawMessage(refundArgs), IdempotencyKey: "bench", Tenant: "acme"}
	ctx := context.Background()
	if _, err := p.Execute(ctx, t, call); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Execute(ctx, t, call); err != nil {
			b.Fatal(err)
		}
	}
}
