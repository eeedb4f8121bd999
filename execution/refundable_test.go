package execution

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/identity"
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
	// Pending, it is not taken: the approvers decide. Approved, it is.
	if _, err := r.ex.Propose(r.ctx, r.refundProposal("ORD-1004", "GB74BUKB20201555559182", 100_000)); err != nil {
		t.Errorf("a proposal of the $1,000.00 left beside the pending $500.00: %v, want it recorded", err)
	}
	for _, p := range []identity.Principal{approver, approver2}[:r.action(a.ID).ApprovalsRequired] {
		if err := r.decide(p, a.ID, approvals.Approve); err != nil {
			t.Fatal(err)
		}
	}
	_, err = r.ex.Propose(r.ctx, r.refundProposal("ORD-1004", "GB74BUKB20201555559182", 100_001))
	if p := problemOf(t, "a proposal beyond the approved one", err); p.Code != approvals.CodeExceedsRefundable ||
		p.Message != "ORD-1004 has $1,000.00 left to refund: $900.00 of $2,400.00 was already refunded and $500.00 more is approved or running. This asks for $1,000.01." {
		t.Errorf("refused with %s %q, want what is left after the approved $500.00", p.Code, p.Message)
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

// Two agents propose refunds of one order at once that together exceed
// what is left; both are approved and run at once: one refund reaches the
// provider, the other fails saying what is left. On PostgreSQL
// (WARDEN_TEST_POSTGRES) the executions race on two connections.
func TestExceedsRefundableConcurrentProposalsRunOnce(t *testing.T) {
	r := newRig(t)
	if _, err := r.run("Where is my order ORD-1008?"); err != nil { // records its $1,249.00
		t.Fatal(err)
	}
	ids := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range ids {
		wg.Go(func() {
			<-start
			a, err := r.ex.Propose(r.ctx, r.refundProposal("ORD-1008", "BE66068210986343", 90_000))
			ids[i], errs[i] = a.ID, err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("proposal %d: %v, want both recorded (pending ones do not take what is left)", i, err)
		}
	}
	for _, id := range ids {
		for _, p := range []identity.Principal{approver, approver2}[:r.action(id).ApprovalsRequired] {
			if err := r.decide(p, id, approvals.Approve); err != nil {
				t.Fatalf("approve %s: %v", id, err)
			}
		}
	}
	start = make(chan struct{})
	for i := range ids {
		wg.Go(func() {
			<-start
			errs[i] = r.ex.ExecuteAction(r.ctx, ids[i])
		})
	}
	close(start)
	wg.Wait()
	var executed, failed int
	for i, id := range ids {
		if errs[i] != nil {
			t.Fatalf("ExecuteAction(%s): %v", id, errs[i])
		}
		switch a := r.action(id); {
		case a.Status == approvals.StatusExecuted:
			executed++
		case a.Status == approvals.StatusFailed && strings.HasPrefix(a.Failure, "Not sent: ORD-1008 has $349.00 left to refund"):
			failed++
		default:
			t.Errorf("action %s %s %q", id, a.Status, a.Failure)
		}
	}
	if executed != 1 || failed != 1 || r.effects("issue_refund") != 1 {
		t.Errorf("%d executed, %d failed, %d refunds at the provider; want 1, 1, 1", executed, failed, r.effects("issue_refund"))
	}
}
