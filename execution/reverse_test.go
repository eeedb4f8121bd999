package execution

import (
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
)

// compensations lists the reversals requested for an action.
func (r *rig) compensations(actionID string) []approvals.Action {
	r.t.Helper()
	cs, err := approvals.Compensations(r.ctx, r.db.Read(), actionID)
	if err != nil {
		r.t.Fatal(err)
	}
	return cs
}

// Who may ask for a reversal, and of what (approvals.MayReverse): a
// refusal creates nothing.
func TestReverseWhoMay(t *testing.T) {
	r := newRig(t)
	refund := r.executed(refundRequest)
	email := r.executed(emailRequest)
	pending := r.pending("Refund $20 for ORD-1004, the item arrived broken").Action
	actions := map[string]approvals.Action{"executed refund": refund, "executed e-mail": email, "pending refund": *pending}
	tests := []struct {
		name      string
		principal identity.Principal
		action    string
		err       error // nil: allowed
	}{
		{"auditor", auditor, "executed refund", approvals.ErrCannotReverse},
		{"admin", admin, "executed refund", approvals.ErrCannotReverse},
		{"approver and on-call of another tenant", outsider, "executed refund", approvals.ErrCannotReverse},
		{"an action not executed yet", approver, "pending refund", approvals.ErrNotReversible},
		{"an irreversible action", approver, "executed e-mail", approvals.ErrNotReversible},
		{"approver of the tenant", approver, "executed refund", nil},
		{"on-call of the tenant", oncall, "executed refund", nil},
		{"approver of every tenant", everywhere, "executed refund", nil},
	}
	for _, tt := range tests {
		a := actions[tt.action]
		before := len(r.compensations(a.ID))
		rev, err := r.ex.Reverse(r.ctx, tt.principal, a.ID, "customer returned the goods")
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: Reverse(%s) = %v, want %v", tt.name, tt.action, err, tt.err)
			}
			if after := len(r.compensations(a.ID)); after != before {
				t.Errorf("%s: %d reversals after a refusal, want %d", tt.name, after, before)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Reverse(%s) = %v, want a reversal", tt.name, tt.action, err)
			continue
		}
		if rev.Compensates != a.ID || rev.Status != approvals.StatusPending {
			t.Errorf("%s: reversal compensates %q, %s; want %q, pending", tt.name, rev.Compensates, rev.Status, a.ID)
		}
	}
}

// A reversal is a new high-impact action for the compensating tool, built
// from the original's receipt, that belongs to the person who asked for
// it: it carries no agent key, so no agent can cancel it, and it runs like
// any other approved action.
func TestReverseOpensACompensatingAction(t *testing.T) {
	r := newRig(t)
	orig := r.executed(refundRequest)
	rev, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
	if err != nil {
		t.Fatalf("Reverse = %v", err)
	}
	if stored := r.action(rev.ID); stored.Status != approvals.StatusPending || stored.Compensates != orig.ID {
		t.Errorf("stored reversal %s compensating %q, want pending compensating %q", stored.Status, stored.Compensates, orig.ID)
	}
	for _, c := range []struct{ name, got, want string }{
		{"tool", rev.Tool, "reverse_refund"},
		{"compensates", rev.Compensates, orig.ID},
		{"key", rev.KeyID, ""},
		{"key owner", rev.KeyOwner, ""},
		{"callback", rev.CallbackURL, ""},
		{"journey", rev.JourneyID, ""},
		{"requested by", rev.RequestedBy, approver.ID},
		{"reason", rev.Reason, "customer returned the goods"},
		{"summary", rev.Summary, "Reverse: " + orig.Summary},
		{"currency", rev.Currency, orig.Currency},
		{"idempotency key", rev.IdempotencyKey, "compensates:" + orig.IdempotencyKey},
		{"impact", string(rev.Impact), string(risk.ImpactHigh)},
		{"reversibility", string(rev.Reversibility), string(risk.Irreversible)},
	} {
		if c.got != c.want {
			t.Errorf("reversal %s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if rev.AmountMinor == nil || *rev.AmountMinor != *orig.AmountMinor || rev.External {
		t.Errorf("reversal amount %v external %v, want %d, not external", rev.AmountMinor, rev.External, *orig.AmountMinor)
	}
	args, err := approvals.OpenArgs(r.ctx, r.db.Read(), r.sealer, rev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := field(t, args, "refund_id"), field(t, orig.Receipt, "refund_id"); got != want || want == "" {
		t.Errorf("reversal arguments %s, want the refund %q from the original's receipt", args, want)
	}

	// The agent whose refund it undoes cannot withdraw it.
	if _, err := r.ex.CancelAction(r.ctx, r.caller, rev.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the agent's CancelAction = %v, want store.ErrNotFound", err)
	}
	// The person who asked cannot approve it.
	if err := r.decide(approver, rev.ID, approvals.Approve); !errors.Is(err, approvals.ErrOwnRequest) {
		t.Errorf("the requester's approval = %v, want %v", err, approvals.ErrOwnRequest)
	}
	if a := r.action(rev.ID); a.Status != approvals.StatusPending {
		t.Errorf("reversal %s after the refused cancel and approval, want pending", a.Status)
	}

	// Another approver approves it, and the refund is taken back once.
	if err := r.decide(approver2, rev.ID, approvals.Approve); err != nil {
		t.Fatalf("approve the reversal: %v", err)
	}
	if err := r.ex.ExecuteAction(r.ctx, rev.ID); err != nil {
		t.Fatalf("ExecuteAction(reversal) = %v", err)
	}
	done := r.action(rev.ID)
	if done.Status != approvals.StatusExecuted || field(t, done.Receipt, "refund_id") != field(t, orig.Receipt, "refund_id") {
		t.Errorf("reversal %s with receipt %s, want executed for refund %s", done.Status, done.Receipt, field(t, orig.Receipt, "refund_id"))
	}
	if n := r.effects("reverse_refund"); n != 1 {
		t.Errorf("%d reversals at the provider, want 1", n)
	}
}

// Pressing Reverse again while a reversal is live (pending, approved or
// executed) returns that reversal: one refund is never reversed twice.
func TestReversePressedAgainReturnsTheLiveReversal(t *testing.T) {
	tests := []struct {
		name   string
		then   func(r *rig, rev approvals.Action)
		status string
	}{
		{"pending", func(*rig, approvals.Action) {}, approvals.StatusPending},
		{"approved", func(r *rig, rev approvals.Action) {
			if err := r.decide(approver2, rev.ID, approvals.Approve); err != nil {
				r.t.Fatal(err)
			}
		}, approvals.StatusApproved},
		{"executed", func(r *rig, rev approvals.Action) {
			if err := r.decide(approver2, rev.ID, approvals.Approve); err != nil {
				r.t.Fatal(err)
			}
			if err := r.ex.ExecuteAction(r.ctx, rev.ID); err != nil {
				r.t.Fatal(err)
			}
		}, approvals.StatusExecuted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			orig := r.executed(refundRequest)
			first, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
			if err != nil {
				t.Fatal(err)
			}
			tt.then(r, first)
			again, err := r.ex.Reverse(r.ctx, oncall, orig.ID, "customer returned the goods")
			if err != nil {
				t.Fatalf("Reverse again = %v", err)
			}
			if again.ID != first.ID || again.Status != tt.status {
				t.Errorf("Reverse again = %s (%s), want the first reversal %s (%s)", again.ID, again.Status, first.ID, tt.status)
			}
			if n := len(r.compensations(orig.ID)); n != 1 {
				t.Errorf("%d reversals recorded, want 1", n)
			}
		})
	}
}

// A reversal that ended without effect (rejected, expired, failed) does
// not stop a new request, under a new key.
func TestReverseAfterAFinishedReversalOpensANewOne(t *testing.T) {
	tests := []struct {
		name   string
		end    func(r *rig, rev approvals.Action)
		status string
	}{
		{"rejected", func(r *rig, rev approvals.Action) {
			if err := r.decide(approver2, rev.ID, approvals.Reject); err != nil {
				r.t.Fatal(err)
			}
		}, approvals.StatusRejected},
		{"expired", func(r *rig, rev approvals.Action) {
			r.advance(25 * time.Hour)
			if n, err := r.ex.ExpireActions(r.ctx); err != nil || n != 1 {
				r.t.Fatalf("ExpireActions = %d, %v; want 1", n, err)
			}
		}, approvals.StatusExpired},
		{"failed", func(r *rig, rev approvals.Action) {
			if err := r.decide(approver2, rev.ID, approvals.Approve); err != nil {
				r.t.Fatal(err)
			}
			r.setEnabled("reverse_refund", false)
			if err := r.ex.ExecuteAction(r.ctx, rev.ID); err != nil {
				r.t.Fatal(err)
			}
			// While it is off a new reversal is refused
			// (TestReverseRefusedWhileTheCompensatingToolIsOff).
			r.setEnabled("reverse_refund", true)
		}, approvals.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			orig := r.executed(refundRequest)
			first, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
			if err != nil {
				t.Fatal(err)
			}
			tt.end(r, first)
			if a := r.action(first.ID); a.Status != tt.status {
				t.Fatalf("first reversal %s, want %s", a.Status, tt.status)
			}
			second, err := r.ex.Reverse(r.ctx, approver, orig.ID, "customer returned the goods")
			if err != nil {
				t.Fatalf("Reverse after a %s reversal = %v", tt.status, err)
			}
			if second.ID == first.ID || second.Status != approvals.StatusPending || second.IdempotencyKey != "compensates:"+orig.IdempotencyKey+":2" {
				t.Errorf("second reversal %s (%s, key %s), want a new pending one under key compensates:%s:2",
					second.ID, second.Status, second.IdempotencyKey, orig.IdempotencyKey)
			}
			if a := r.action(first.ID); a.Status != tt.status {
				t.Errorf("first reversal %s after the second, want still %s", a.Status, tt.status)
			}
			if n := len(r.compensations(orig.ID)); n != 2 {
				t.Errorf("%d reversals recorded, want 2", n)
			}
			// And the new one is now the live one.
			third, err := r.ex.Reverse(r.ctx, oncall, orig.ID, "customer returned the goods")
			if err != nil || third.ID != second.ID {
				t.Errorf("Reverse a third time = %s, %v; want the second reversal %s", third.ID, err, second.ID)
			}
		})
	}
}

// A reversal needs the person's reason; without one nothing is created.
func TestReverseNeedsAReason(t *testing.T) {
	r := newRig(t)
	orig := r.executed(refundRequest)
	for _, reason := range []string{"", "   "} {
		if _, err := r.ex.Reverse(r.ctx, approver, orig.ID, reason); !errors.Is(err, ErrReverseReasonRequired) {
			t.Errorf("Reverse(reason %q) = %v, want ErrReverseReasonRequired", reason, err)
		}
	}
	revs, err := approvals.Compensations(r.ctx, r.db.Read(), orig.ID)
	if err != nil || len(revs) != 0 {
		t.Errorf("reversals after refused requests = %d, %v; want none", len(revs), err)
	}
}
