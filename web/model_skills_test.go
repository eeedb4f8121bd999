package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/views"
)

// The development demo's model-driven skill, over the real API: the demo
// key runs model_refunds, demo-agent (the fake upstream's scripted agent)
// asks for the refund, people approve it, and the journey completes with
// the model's answer; every model call is traced against the journey.
func TestDemoModelDrivenJourney(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	body, _ := json.Marshal(map[string]string{"input": "model demo: refund ORD-1005, it arrived torn", "skill": "model_refunds"})
	r := callAPI(t, ctx, http.MethodPost, in.URL+"/v1/journeys", in.DemoKey, body, nil)
	if r.Status != http.StatusAccepted || r.str("status") != "awaiting_approval" {
		t.Fatalf("model-driven journey = %d %s", r.Status, r.Raw)
	}
	action := r.Body["action"].(map[string]any)
	a, err := approvals.Get(ctx, in.DB.Read(), action["id"].(string))
	if err != nil || a.Tool != "issue_refund" || a.AmountMinor == nil || *a.AmountMinor != 4550 {
		t.Fatalf("action %+v (%v), want the refund of ORD-1005's USD 45.50", a, err)
	}
	for i := range a.ApprovalsRequired {
		p := identity.Principal{ID: fmt.Sprintf("p-%d", i), Name: "Approver", Roles: []string{"approver"}, Tenants: []string{"acme"}}
		if _, err := in.Agent.Execution.Decide(ctx, approvals.Request{Principal: p, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest}); err != nil {
			t.Fatal(err)
		}
	}
	var g apiResp
	wait.For(20*time.Second, func() bool {
		g = callAPI(t, ctx, http.MethodGet, in.URL+"/v1/journeys/"+r.str("id"), in.DemoKey, nil, nil)
		return g.str("status") == "completed"
	})
	if g.str("status") != "completed" || !strings.Contains(g.str("output"), "refund for ORD-1005 is done") {
		t.Fatalf("journey after approval = %s", g.Raw)
	}
	calls, err := models.CallsOfJourney(ctx, in.DB.Read(), r.str("id"))
	if err != nil || len(calls) != 3 {
		t.Fatalf("model calls of the journey = %+v (%v), want 3 (lookup, refund, answer)", calls, err)
	}
	var modelCost int64
	for _, c := range calls {
		if c.Alias != "demo-agent" || c.Status != models.StatusOK || c.CostMicros <= 0 {
			t.Errorf("model call %+v, want demo-agent, ok, charged", c)
		}
		modelCost += c.CostMicros
	}

	// The Budgets page adds up: the approved refund is counted once (in
	// its journey), the model calls have their own line, and nothing is
	// left unexplained (a review found a negative "not itemised" line).
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	p := erin.get("/budgets")
	if got := text(p, "budget-spend-other-acme"); got != "" {
		t.Errorf("not itemised line = %q, want none", got)
	}
	if got := text(p, "budget-spend-models-acme"); got != views.Money(modelCost) {
		t.Errorf("model calls line = %q, want %s", got, views.Money(modelCost))
	}

	// The Models page links each of the journey's calls to its trace.
	mp := erin.get("/models")
	if n := mp.Doc.Find(`a[href="/traces/` + r.str("id") + `"]`).Length(); n != len(calls) {
		t.Errorf("Model calls links the journey %d times, want %d", n, len(calls))
	}

	// The trace lists the journey's model calls and what they cost.
	tr := erin.get("/traces/" + r.str("id"))
	if rows := tr.Doc.Find(`[data-testid="trace-model-calls"] tbody tr`).Length(); rows != len(calls) {
		t.Errorf("trace lists %d model calls, want %d", rows, len(calls))
	}
	if got := text(tr, "trace-model-cost"); got != views.Money(modelCost) {
		t.Errorf("trace model cost = %q, want %s", got, views.Money(modelCost))
	}
}
