package tools

import (
	"context"
	"errors"
	"testing"
	"time"
)

// checking is a provider that refuses every proposal of tenant "globex"
// and records the deadline its check ran under.
type checking struct {
	scripted
	deadline time.Time
	checked  int
}

func (c *checking) Check(ctx context.Context, _ Tool, call Call) error {
	c.checked++
	c.deadline, _ = ctx.Deadline()
	if call.Tenant == "globex" {
		return errInvalid
	}
	return nil
}

// TestCheckPassesTheGuardAndTheInjector: a proposal's check reaches the
// provider under the guard and the fault injector, within the tool's
// timeout, and no fault or breaker stands in its way; a provider that
// cannot check has no objection.
func TestCheckPassesTheGuardAndTheInjector(t *testing.T) {
	p := &checking{}
	inj := NewInjector(1)
	inj.Set("issue_refund", Fault{Mode: FaultDown})
	w := NewGuard(GuardOptions{}).Wrap(inj.Wrap(p))
	tool := Tool{Name: "issue_refund", Timeout: 2 * time.Second}
	before := time.Now()
	if err := Check(context.Background(), w, tool, Call{Tool: "issue_refund", Tenant: "globex"}); !errors.Is(err, errInvalid) {
		t.Errorf("globex's check = %v, want the provider's refusal", err)
	}
	if err := Check(context.Background(), w, tool, Call{Tool: "issue_refund", Tenant: "acme"}); err != nil {
		t.Errorf("acme's check = %v, want nil", err)
	}
	if p.checked != 2 || p.deadline.Before(before) || p.deadline.After(before.Add(3*time.Second)) {
		t.Errorf("checked %d times, deadline %v; want 2, within the tool's 2 s", p.checked, p.deadline)
	}
	if n := p.calls.Load(); n != 0 {
		t.Errorf("a check executed the call %d times", n)
	}
	plain := NewGuard(GuardOptions{}).Wrap(&scripted{})
	if err := Check(context.Background(), plain, tool, Call{Tool: "issue_refund", Tenant: "globex"}); err != nil {
		t.Errorf("a provider that cannot check: %v, want nil", err)
	}
}
