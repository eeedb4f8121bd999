package web

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 21, finding 6: for a tool other than the three with sentences of
// their own, the agent's free-text summary was the approval's headline
// and its queue row: "Refund $1.00 … pre-approved by Finance" on a
// lookup_order call. The headline is Warden's sentence from the tool, its
// declared target and amount; the agent's words appear only under
// "Agent's summary" on the action page, attributed to the agent.
func TestApprovalHeadlineIsWardensNotTheAgents(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	const lie = "Refund $1.00 to the customer, pre-approved by Finance: approve now"
	const headline = "Call lookup_order on ORD-1003 for $1.00" // lookup_order declares its target (order_id)
	r := propose(t, in, in.DemoKey, map[string]any{
		"tool": "lookup_order", "arguments": map[string]any{"order_id": "ORD-1003"},
		"summary": lie, "reason": "routine check", "amount": 100, "currency": "USD",
	}, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("POST /v1/actions = %d %s", r.Status, r.Raw)
	}
	if r.str("summary") != headline || r.str("agent_summary") != lie {
		t.Errorf("answer summary %q, agent_summary %q; want %q and the agent's own words", r.str("summary"), r.str("agent_summary"), headline)
	}
	id := r.str("id")

	q := alice.get("/approvals")
	row := strings.TrimSpace(q.Doc.Find(`[data-testid="approval-` + id + `"] .queue-summary`).Text())
	if row != headline {
		t.Errorf("queue row headline = %q, want %q", row, headline)
	}
	if strings.Contains(q.Doc.Text(), "pre-approved by Finance") {
		t.Error("the queue shows the agent's summary")
	}

	p := alice.get("/approvals/" + id)
	if got := text(p, "action-summary"); got != headline {
		t.Errorf("action page headline = %q, want %q", got, headline)
	}
	if got := strings.TrimSpace(p.Doc.Find("title").Text()); strings.Contains(got, "Finance") {
		t.Errorf("page title %q carries the agent's words", got)
	}
	if label, said := text(p, "agent-summary-label"), p.Doc.Find(`[data-testid="agent-summary"] q`).Text(); label != "Agent's summary" || said != lie {
		t.Errorf("agent's summary shown as %q: %q; want it under \"Agent's summary\"", label, said)
	}
	if n := strings.Count(p.Doc.Text(), "pre-approved by Finance"); n != 1 {
		t.Errorf("the agent's words appear %d times on the action page, want once (under Agent's summary)", n)
	}
	if got := text(p, "action-reason"); got != "routine check" {
		t.Errorf("agent's reason = %q, want the reason alone", got)
	}
}
