package execution

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
)

// A journey whose action was rejected, expired or cancelled ends with it,
// and its approval step says so instead of still awaiting approval.
func TestJourneyEndsWithItsUndecidedAction(t *testing.T) {
	for _, how := range []string{approvals.StatusRejected, approvals.StatusExpired, "expired now", approvals.StatusCancelled} {
		end := how
		if how == "expired now" {
			end = approvals.StatusExpired
		}
		t.Run(how, func(t *testing.T) {
			r := newRig(t)
			out := r.pending(refundRequest)
			switch how {
			case "expired now": // a runbook's expire_pending, before the expiry
				oncall := audit.Actor{Type: audit.ActorPrincipal, ID: "p-oncall"}
				if n, err := r.ex.ExpirePending(r.ctx, []string{out.Action.ID}, oncall, "incident"); err != nil || n != 1 {
					t.Fatalf("ExpirePending = %d, %v; want 1", n, err)
				}
			case approvals.StatusRejected:
				if err := r.decide(approver, out.Action.ID, approvals.Reject); err != nil {
					t.Fatal(err)
				}
			case approvals.StatusExpired:
				r.advance(48 * time.Hour)
				if _, err := r.ex.ExpireActions(r.ctx); err != nil {
					t.Fatal(err)
				}
			case approvals.StatusCancelled:
				if _, err := r.ex.CancelAction(r.ctx, r.caller, out.Action.ID); err != nil {
					t.Fatal(err)
				}
			}
			j := r.journey(out.Journey.ID)
			if j.Status != end || j.FinishedAt == nil {
				t.Errorf("journey = %s (finished %v), want %s and finished", j.Status, j.FinishedAt, end)
			}
			if last := j.Steps[len(j.Steps)-1]; last.Kind != "approval" || last.Status != end {
				t.Errorf("approval step = %s %s, want %s", last.Kind, last.Status, end)
			}
		})
	}
}
