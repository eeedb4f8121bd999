package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// The Budgets page itemises the period's spend so it adds up: journeys,
// actions charged outside any journey (a refund proposed through
// /v1/actions, executed after approval), and anything else.
func TestBudgetSpendIsItemised(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund"}, 600, 60, nil)
	r := propose(t, in, secrets.Key, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary": "Refund $45.50 for ORD-1005", "reason": "double charge",
	}, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	decide(t, in, r.str("id"), approvals.Approve, "")
	deadline := time.Now().Add(10 * time.Second)
	for getAction(t, in, r.str("id")).Status != approvals.StatusExecuted {
		if time.Now().After(deadline) {
			t.Fatalf("the approved refund did not execute: %s", getAction(t, in, r.str("id")).Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)

	acme, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	b, err := budgets.Get(ctx, in.DB.Read(), acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	since := budgets.PeriodStart(b.Period, time.Now())
	journeys, _, _ := journeys.SpentSince(ctx, in.DB.Read(), acme.ID, since)
	actions, n, _ := approvals.ChargedSince(ctx, in.DB.Read(), acme.ID, since)
	if n != 1 || actions <= 0 {
		t.Fatalf("the executed refund was not charged outside a journey: %d charges, %d micros", n, actions)
	}

	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	p := erin.get("/budgets")
	if got := text(p, "budget-spend-journeys-acme"); got != views.Money(journeys) {
		t.Errorf("journeys line = %q, want %s", got, views.Money(journeys))
	}
	if got := text(p, "budget-spend-actions-acme"); got != views.Money(actions) {
		t.Errorf("actions line = %q, want %s", got, views.Money(actions))
	}
	other := b.SpentMicros - journeys - actions
	if got := text(p, "budget-spend-other-acme"); (other == 0) != (got == "") || other != 0 && got != views.Money(other) {
		t.Errorf("other line = %q, want %s (shown only when not zero)", got, views.Money(other))
	}
	if text(p, "budget-spent-acme") != views.Money(journeys+actions+other) {
		t.Errorf("spent %s does not add up to %s + %s + %s", text(p, "budget-spent-acme"), views.Money(journeys), views.Money(actions), views.Money(other))
	}
}
