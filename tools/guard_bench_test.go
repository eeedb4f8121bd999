package tools

import (
	"context"
	"testing"
)

// BenchmarkGuardOverhead is what the guard (bulkhead, retry loop, breaker,
// deadline) adds to one successful tool call, against calling the
// provider directly.
//
//	go test ./tools -run '^$' -bench GuardOverhead
func BenchmarkGuardOverhead(b *testing.B) {
	p := &scripted{fn: func(context.Context, int64) (Result, error) { return Result{}, nil }}
	tool := Tool{Name: "lookup_order", MaxAttempts: 3}
	call := Call{Tool: "lookup_order", IdempotencyKey: "k"}
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			p.Execute(ctx, tool, call)
		}
	})
	b.Run("guarded", func(b *testing.B) {
		w := NewGuard(GuardOptions{}).Wrap(p)
		for range b.N {
			w.Execute(ctx, tool, call)
		}
	})
}
