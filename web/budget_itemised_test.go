package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools/sim"
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
	waitAction(t, in, r.str("id"), approvals.StatusExecuted)
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

// The Budgets page reads running totals (budgets.SpendSince) instead of
// adding up the period's rows; after a mix of what settles spend through
// the real paths — journeys that complete, fail on their tool, are
// cancelled by a client that went away (their reservation released), stop
// for an approval that is then rejected, a refund proposed through
// /v1/actions and executed, model calls that succeed after a failover or
// fail outright — the totals equal the old sums over the rows, tenant by
// tenant, and the page shows them. Retention then deletes the journeys:
// the page's figures stay as they were, while the old sum loses them.
func TestBudgetRunningTotalsMatchTheRows(t *testing.T) {
	r := newModelRig(t, 1<<40, deployment("broken", "fail-500", 0), deployment("fake-b", "fake", 1))
	in := r.in
	in.waitReady(t)
	ctx := context.Background()
	acme, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")

	for range 3 {
		if j := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); j.Status != http.StatusOK {
			t.Fatalf("journey = %d %s", j.Status, j.Raw)
		}
	}
	in.Agent.Sim.SetFaults(sim.Faults{FailNext: 50})
	if j := journey(t, in, in.DemoKey, "Where is my order ORD-1002?", nil); j.str("status") == "completed" {
		t.Fatalf("journey against a failing tool = %d %s", j.Status, j.Raw)
	}
	in.Agent.Sim.SetFaults(sim.Faults{Delay: 2 * time.Second})
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	body, _ := json.Marshal(map[string]string{"input": "Where is my order ORD-1003?"})
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, in.URL+"/v1/journeys", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+in.DemoKey)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	cancel()
	waitUntil(t, "the abandoned journey ends cancelled", func() bool {
		return countRows(t, in.DB, `SELECT COUNT(*) FROM journeys WHERE status = 'cancelled'`) == 1
	})
	in.Agent.Sim.SetFaults(sim.Faults{})
	pending := journey(t, in, in.DemoKey, "Refund order ORD-1004 in full, the customer returned everything", nil)
	action, _ := pending.Body["action"].(map[string]any)
	if pending.str("status") != "awaiting_approval" || action == nil {
		t.Fatalf("refund journey = %d %s", pending.Status, pending.Raw)
	}
	decide(t, in, action["id"].(string), approvals.Reject, "not this one")

	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund"}, 600, 60, nil)
	p := propose(t, in, secrets.Key, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary": "Refund $45.50 for ORD-1005", "reason": "double charge",
	}, nil)
	if p.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", p.Status, p.Raw)
	}
	decide(t, in, p.str("id"), approvals.Approve, "")
	waitUntil(t, "the approved refund executes", func() bool { return getAction(t, in, p.str("id")).Status == approvals.StatusExecuted })

	for _, text := range []string{"hello", "a somewhat longer question for the model"} {
		if _, err := r.client.Chat.Completions.New(ctx, userChat(text)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := models.Switch(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "test"}, "fake-b", false, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.Chat.Completions.New(ctx, userChat("nobody answers")); err == nil {
		t.Fatal("a call with only a failing deployment answered")
	}

	since := budgets.PeriodStart(budgets.Month, time.Now())
	old := func(tenantID string) budgets.Spend {
		var sp budgets.Spend
		var err error
		if sp.Journeys, sp.JourneyCount, err = journeys.SpentSince(ctx, in.DB.Read(), tenantID, since); err != nil {
			t.Fatal(err)
		}
		if sp.Actions, sp.ActionCount, err = approvals.ChargedSince(ctx, in.DB.Read(), tenantID, since); err != nil {
			t.Fatal(err)
		}
		if sp.Models, sp.ModelCount, err = models.SpentSince(ctx, in.DB.Read(), tenantID, since); err != nil {
			t.Fatal(err)
		}
		return sp
	}
	want := map[string]budgets.Spend{"acme": old(acme.ID), "modelco": old(r.tenant)}
	if w := want["acme"]; w.JourneyCount < 4 || w.ActionCount != 1 || w.Actions <= 0 {
		t.Fatalf("acme spent %+v; the test meant journeys that cost and one charged refund", w)
	}
	if w := want["modelco"]; w.ModelCount != 3 || w.Models <= 0 {
		t.Fatalf("modelco spent %+v; the test meant three model calls, two that cost", w)
	}
	for slug, id := range map[string]string{"acme": acme.ID, "modelco": r.tenant} {
		got, err := budgets.SpendSince(ctx, in.DB.Read(), id, since)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[slug] {
			t.Errorf("%s: running totals %+v, want the rows' sums %+v", slug, got, want[slug])
		}
	}

	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	shown := func(when string) {
		t.Helper()
		pg := erin.get("/budgets")
		for slug, w := range want {
			table := pg.Doc.Find(`[data-testid="budget-spend-` + slug + `"]`).Text()
			for _, line := range []string{fmt.Sprintf("Journeys (%d)", w.JourneyCount), fmt.Sprintf("reversals (%d)", w.ActionCount), fmt.Sprintf("Model calls (%d)", w.ModelCount)} {
				if !strings.Contains(table, line) {
					t.Errorf("%s: %s spend table lacks %q: %s", when, slug, line, strings.Join(strings.Fields(table), " "))
				}
			}
			for id, micros := range map[string]int64{"journeys": w.Journeys, "actions": w.Actions, "models": w.Models} {
				if got := text(pg, "budget-spend-"+id+"-"+slug); got != views.Money(micros) {
					t.Errorf("%s: %s %s line = %q, want %s", when, slug, id, got, views.Money(micros))
				}
			}
		}
	}
	shown("before retention")

	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := journeys.DeleteOlderThan(ctx, tx, acme.ID, time.Now().Add(time.Minute))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if left := old(acme.ID); left.JourneyCount >= want["acme"].JourneyCount {
		t.Fatalf("retention left %d of acme's %d journeys that cost", left.JourneyCount, want["acme"].JourneyCount)
	}
	shown("after retention")
}
