package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
)

// An approver about to approve a refund sees the refunds of the same order
// that were already executed or are waiting (a review found a second
// $54.00 refund of ORD-1002 offered for approval with no word of the first).
func TestApproverSeesOtherActionsOnTheSameOrder(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund"}, 600, 60, nil)
	// Two partial refunds: a second full one of the $45.50 order would be
	// refused outright (exceeds_refundable).
	refund := func(cents int) string {
		t.Helper()
		r := propose(t, in, secrets.Key, map[string]any{
			"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": cents, "currency": "USD", "account": "FR7630004008230001234567819"},
			"summary": "Refund part of ORD-1005", "reason": "double charge",
		}, nil)
		if r.Status != http.StatusAccepted {
			t.Fatalf("propose = %d %s", r.Status, r.Raw)
		}
		return r.str("id")
	}
	first := refund(2000)
	decide(t, in, first, approvals.Approve, "")
	waitAction(t, in, first, approvals.StatusExecuted)
	second := refund(2000)

	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	p := bob.get("/approvals/" + second)
	others := text(p, "approve-others")
	if !strings.Contains(others, first) || !strings.Contains(others, "Executed") || !strings.Contains(others, "ORD-1005") {
		t.Fatalf("the second refund's page says %q about others on ORD-1005; want the executed first refund %s", others, first)
	}
	if strings.Contains(others, second) {
		t.Errorf("the action lists itself among the others: %q", others)
	}
	// The first, already executed, offers no decision and no such list.
	if got := text(bob.get("/approvals/"+first), "approve-others"); got != "" {
		t.Errorf("an executed action lists others: %q", got)
	}
}
