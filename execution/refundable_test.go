package execution

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
)

// refundProposal is an external agent's proposal of a refund of order
// (paid from account) of cents in USD.
func (r *rig) refundProposal(order, account string, cents int) Proposal {
	args, _ := json.Marshal(map[string]any{"order_id": order, "amount_minor": cents, "currency": "USD", "account": account})
	return Proposal{Caller: r.caller, Tool: "issue_refund", Arguments: args, Summary: "Refund " + order}
}

// After a refund of ORD-1004 executed, a second one asking for more than
// is left of the order — whose total the journey's lookup_order recorded
// — is refused with 400 exceeds_refundable and a sentence, by a journey
// and by an external agent's proposal alike, and nothing is asked of
// approvers; what fits is proposed, and Refundable tells its approvers
// what was already refunded.
func TestExceedsRefundableThroughTheDoors(t *testing.T) {
	r := newRig(t)
	first := r.executed("refund $900.00 on ORD-1004")
	if first.AmountMinor == nil || *first.AmountMinor != 90_000 {
		t.Fatalf("first refund %v, want $900.00", first.AmountMinor)
	}
	const want = "ORD-1004 has $1,500.00 left to refund: $900.00 of $2,400.00 was already refunded. This asks for $1,600.00."

	_, err := r.run("refund $1,600.00 on ORD-1004")
	p := problemOf(t, "the journey of $1,600.00", err)
	if p.Code != approvals.CodeExceedsRefundable || p.Status() != 400 || p.Message != want {
		t.Errorf("journey refused with %d %s %q, want 400 %s %q", p.Status(), p.Code, p.Message, approvals.CodeExceedsRefundable, want)
	}
	var je *journeys.JourneyError
	if !errors.As(err, &je) {
		t.Fatalf("journey error %T, want a JourneyError", err)
	}
	j := r.journey(je.Journey.ID)
	last := j.Steps[len(j.Steps)-1]
	if j.Status != journeys.StatusFailed || j.ErrorCode != approvals.CodeExceedsRefundable || last.Status != "refused" || last.Tool != "issue_refund" || last.Error != want {
		t.Errorf("journey %s (%s), last step %s %s %q; want failed exceeds_refundable with the refund refused", j.Status, j.ErrorCode, last.Tool, last.Status, last.Error)
	}
	if _, err := approvals.ByJourney(r.ctx, r.db.Read(), j.ID); err == nil {
		t.Error("the refused journey created an action")
	}

	_, err = r.ex.Propose(r.ctx, r.refundProposal("ORD-1004", "GB74BUKB20201555559182", 160_000))
	p = problemOf(t, "the proposal of $1,600.00", err)
	if p.Code != approvals.CodeExceedsRefundable || p.Status() != 400 || p.Message != want {
		t.Errorf("proposal refused with %d %s %q, want 400 %s %q", p.Status(), p.Code, p.Message, approvals.CodeExceedsRefundable, want)
	}

	a, err := r.ex.Propose(r.ctx, r.refundProposal("ORD-1004", "GB74BUKB20201555559182", 50_000))
	if err != nil {
		t.Fatalf("a proposal of $500.00 of the $1,500.00 left: %v", err)
	}
	line, ok, err := approvals.Refundable(r.ctx, r.db.Read(), a)
	if err != nil || !ok || line.Sentence() != "Already refunded $900.00 of $2,400.00 on ORD-1004." {
		t.Errorf("the approvers' line %q (%v, %v), want the $900.00 already refunded of $2,400.00", line.Sentence(), ok, err)
	}
	// The pending $500.00 is taken too: $1,000.01 more is refused.
	_, err = r.ex.Propose(r.ctx, r.refundProposal("ORD-1004", "GB74BUKB20201555559182", 100_001))
	if p := problemOf(t, "a proposal beyond the pending one", err); p.Code != approvals.CodeExceedsRefundable ||
		!strings.Contains(p.Message, "$1,000.00 left to refund: $900.00 of $2,400.00 was already refunded and $500.00 more is awaiting approval or running") {
		t.Errorf("refused with %s %q, want what is left after the pending $500.00", p.Code, p.Message)
	}
}

// Two refunds approved before the order's total was known (no lookup had
// answered it) run only as far as it goes once it is: the first executes,
// the second fails without reaching the provider, saying what is left.
func TestExceedsRefundableAtExecutionNothingSent(t *testing.T) {
	r := newRig(t)
	var ids []string
	for range 2 {
		a, err := r.ex.Propose(r.ctx, r.refundProposal("ORD-1003", "NL19ABNA0457218836", 45_000))
		if err != nil {
			t.Fatalf("propose $450.00 of ORD-1003 with no total known: %v", err)
		}
		if err := r.decide(approver, a.ID, approvals.Approve); err != nil {
			t.Fatalf("approve %s: %v", a.ID, err)
		}
		ids = append(ids, a.ID)
	}
	if _, err := r.run("Where is my order ORD-1003?"); err != nil {
		t.Fatalf("the order-status journey: %v", err)
	}
	for _, id := range ids {
		if err := r.ex.ExecuteAction(r.ctx, id); err != nil {
			t.Fatalf("ExecuteAction(%s): %v", id, err)
		}
	}
	if a := r.action(ids[0]); a.Status != approvals.StatusExecuted {
		t.Errorf("first refund %s (%s), want executed", a.Status, a.Failure)
	}
	second := r.action(ids[1])
	const want = "Not sent: ORD-1003 has $449.00 left to refund: $450.00 of $899.00 was already refunded. This asks for $450.00."
	if second.Status != approvals.StatusFailed || second.Failure != want {
		t.Errorf("second refund %s %q, want failed %q", second.Status, second.Failure, want)
	}
	if n := r.effects("issue_refund"); n != 1 {
		t.Errorf("%d refunds reached the provider, want 1", n)
	}
}
