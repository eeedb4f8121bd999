package execution

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// An approved action runs once: approved → executing → executed, with the
// provider's receipt, and the journey that waited for it completes from
// its journal. Running the job again changes nothing.
func TestExecuteActionRunsTheApprovedCallOnce(t *testing.T) {
	r := newRig(t)
	out := r.pending(refundRequest)
	id := out.Action.ID
	spentBefore := r.budget().SpentMicros
	journeyCost := r.journey(out.Journey.ID).Cost.TotalMicros
	if err := r.decide(approver, id, approvals.Approve); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if a := r.action(id); a.Status != approvals.StatusApproved {
		t.Fatalf("action %s after approval, want approved", a.Status)
	}
	// Budgets are reserved before work: the approval reserves the call.
	if b := r.budget(); b.ReservedMicros != highMicros || b.SpentMicros != spentBefore {
		t.Errorf("after approval: budget reserved %d spent %d, want reserved %d spent %d", b.ReservedMicros, b.SpentMicros, highMicros, spentBefore)
	}

	// What the action's status is while the provider has the call.
	var mu sync.Mutex
	var during []string
	r.hooks.set(func(ctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		if call.Tool == "issue_refund" {
			a, err := approvals.Get(ctx, r.db.Read(), id)
			mu.Lock()
			during = append(during, a.Status)
			mu.Unlock()
			if err != nil {
				return tools.Result{}, err
			}
		}
		return next()
	})
	if err := r.ex.ExecuteAction(r.ctx, id); err != nil {
		t.Fatalf("ExecuteAction = %v", err)
	}
	mu.Lock()
	if !slices.Equal(during, []string{approvals.StatusExecuting}) {
		t.Errorf("status while the provider ran: %q, want [executing]", during)
	}
	mu.Unlock()

	a := r.action(id)
	refundID := field(t, a.Receipt, "refund_id")
	if a.Status != approvals.StatusExecuted || a.ExecutedAt == nil || a.Failure != "" || !strings.HasPrefix(refundID, "rf_") {
		t.Errorf("action %s (executed at %v, failure %q, receipt %s), want executed with the refund's receipt", a.Status, a.ExecutedAt, a.Failure, a.Receipt)
	}
	calls := r.hooks.callsOf("issue_refund")
	if len(calls) != 1 || calls[0].IdempotencyKey != a.IdempotencyKey {
		t.Errorf("issue_refund calls %+v, want one under the action's key %s", calls, a.IdempotencyKey)
	}
	if n := r.effects("issue_refund"); n != 1 {
		t.Errorf("%d refunds issued, want 1", n)
	}

	j := r.journey(out.Journey.ID)
	if j.Status != journeys.StatusCompleted || j.FinishedAt == nil || j.ErrorCode != "" {
		t.Errorf("journey %s (finished %v, error %q), want completed", j.Status, j.FinishedAt, j.ErrorCode)
	}
	if want := []string{"route ok", "tool lookup_order ok", "approval issue_refund ok"}; !slices.Equal(stepsOf(j), want) {
		t.Errorf("journal = %q, want %q", stepsOf(j), want)
	}
	// The steps before the approval are replayed from the journal, never
	// run again.
	if n := len(r.hooks.callsOf("lookup_order")); n != 1 {
		t.Errorf("lookup_order called %d times, want once (before the approval)", n)
	}
	// The account's last four are pinned by
	// TestExecuteActionOutputShowsTheAccountsLastFour (a known bug).
	if want := regexp.MustCompile(`^Refund ` + regexp.QuoteMeta(refundID) + ` of \$45\.50 to account ••\S+ issued\.$`); !want.MatchString(j.Output) {
		t.Errorf("output = %q, want it to match %s", j.Output, want)
	}
	if j.Cost.ToolUnits != 2 || j.Cost.TotalMicros != journeyCost+highMicros {
		t.Errorf("journey cost %d units, %d micros; want 2 units, %d micros (the refund charged)", j.Cost.ToolUnits, j.Cost.TotalMicros, journeyCost+highMicros)
	}
	b := r.budget()
	if b.ReservedMicros != 0 || b.SpentMicros != spentBefore+highMicros {
		t.Errorf("after execution: budget reserved %d spent %d, want reserved 0 spent %d", b.ReservedMicros, b.SpentMicros, spentBefore+highMicros)
	}

	// The job again, as after a crash or a duplicate delivery.
	if err := r.ex.ExecuteAction(r.ctx, id); err != nil {
		t.Fatalf("ExecuteAction again = %v", err)
	}
	again := r.action(id)
	if again.Status != approvals.StatusExecuted || string(again.Receipt) != string(a.Receipt) {
		t.Errorf("second run: action %s receipt %s, want executed, receipt %s", again.Status, again.Receipt, a.Receipt)
	}
	if n, c := r.effects("issue_refund"), len(r.hooks.callsOf("issue_refund")); n != 1 || c != 1 {
		t.Errorf("second run: %d refunds after %d calls, want 1 after 1", n, c)
	}
	if b2 := r.budget(); b2 != b {
		t.Errorf("second run: budget %+v, want unchanged %+v", b2, b)
	}
	if j2 := r.journey(out.Journey.ID); j2.Status != j.Status || j2.Output != j.Output || j2.Cost != j.Cost || len(j2.Steps) != len(j.Steps) {
		t.Errorf("second run: journey %s %q %+v (%d steps), want unchanged", j2.Status, j2.Output, j2.Cost, len(j2.Steps))
	}
}

// The completed journey names the account as the pending one did, by
// its last four characters.
func TestExecuteActionOutputShowsTheAccountsLastFour(t *testing.T) {
	r := newRig(t)
	a := r.executed(refundRequest)
	j := r.journey(a.JourneyID)
	if want := "Refund " + field(t, a.Receipt, "refund_id") + " of $45.50 to account ••7819 issued."; j.Output != want {
		t.Errorf("output = %q, want %q", j.Output, want)
	}
}

// An approved action that can no longer run is failed for review: the
// job is done (no retry), its reservation released, its journey failed.
func TestExecuteActionFails(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(r *rig)
		failure string // part of the action's recorded failure
		calls   int    // calls of issue_refund that reached the provider
	}{
		{"tool switched off after approval", func(r *rig) { r.setEnabled("issue_refund", false) }, "blocked before sending: tool issue_refund is switched off", 0},
		{"tenant frozen after approval", func(r *rig) { r.freeze() }, "blocked before sending: the tenant is frozen", 0},
		{
			"the provider refuses the call",
			func(r *rig) {
				r.hooks.set(failing("issue_refund", &tools.Error{Kind: tools.Terminal, Reason: "the account is closed"}))
			},
			"the account is closed", 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			out := r.pending(refundRequest)
			spentBefore := r.budget().SpentMicros
			if err := r.decide(approver, out.Action.ID, approvals.Approve); err != nil {
				t.Fatalf("approve: %v", err)
			}
			tt.setup(r)
			if err := r.ex.ExecuteAction(r.ctx, out.Action.ID); err != nil {
				t.Errorf("ExecuteAction = %v, want nil: the job is done, the action failed", err)
			}
			a := r.action(out.Action.ID)
			if a.Status != approvals.StatusFailed || !strings.Contains(a.Failure, tt.failure) || a.ExecutedAt != nil {
				t.Errorf("action %s (failure %q, executed at %v), want failed saying %q", a.Status, a.Failure, a.ExecutedAt, tt.failure)
			}
			j := r.journey(out.Journey.ID)
			if j.Status != journeys.StatusFailed || j.ErrorCode != "action_failed" || j.FinishedAt == nil {
				t.Errorf("journey %s (error %q, finished %v), want failed (action_failed), finished", j.Status, j.ErrorCode, j.FinishedAt)
			}
			// The trace tells the truth: its approval step failed, it no
			// longer awaits approval.
			if last := j.Steps[len(j.Steps)-1]; last.Kind != "approval" || last.Status != journeys.StatusFailed || !strings.Contains(last.Error, tt.failure) {
				t.Errorf("approval step = %s %s (%q), want approval failed saying %q", last.Kind, last.Status, last.Error, tt.failure)
			}
			if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != spentBefore {
				t.Errorf("budget reserved %d spent %d, want the approval's reservation released: reserved 0 spent %d", b.ReservedMicros, b.SpentMicros, spentBefore)
			}
			if got := len(r.hooks.callsOf("issue_refund")); got != tt.calls || r.effects("issue_refund") != 0 {
				t.Errorf("issue_refund reached the provider %d times with %d effects, want %d times and no effect", got, r.effects("issue_refund"), tt.calls)
			}
			// The job again: nothing changes, nothing is called.
			if err := r.ex.ExecuteAction(r.ctx, out.Action.ID); err != nil {
				t.Errorf("ExecuteAction again = %v", err)
			}
			if again := r.action(out.Action.ID); again.Status != approvals.StatusFailed || again.Failure != a.Failure {
				t.Errorf("second run: action %s (%q), want failed (%q)", again.Status, again.Failure, a.Failure)
			}
			if got := len(r.hooks.callsOf("issue_refund")); got != tt.calls {
				t.Errorf("second run: %d calls of issue_refund, want still %d", got, tt.calls)
			}
		})
	}
}

// A transient failure leaves the action executing and its reservation in
// place; the job's retry presents the same idempotency key, and the
// refund happens once.
func TestExecuteActionRetriesWithTheSameKey(t *testing.T) {
	r := newRig(t)
	out := r.approved(refundRequest)
	id := out.Action.ID
	r.sim.SetFaults(sim.Faults{FailNext: 3}) // every attempt of the first run
	err := r.ex.ExecuteAction(r.ctx, id)
	var perm *jobs.Permanent
	if err == nil || errors.As(err, &perm) {
		t.Fatalf("ExecuteAction = %v, want an error the job retries", err)
	}
	if a := r.action(id); a.Status != approvals.StatusExecuting {
		t.Errorf("after a transient failure: action %s, want executing", a.Status)
	}
	if j := r.journey(out.Journey.ID); j.Status != journeys.StatusAwaitingApproval {
		t.Errorf("after a transient failure: journey %s, want still awaiting_approval", j.Status)
	}
	if b := r.budget(); b.ReservedMicros != highMicros {
		t.Errorf("after a transient failure: budget reserved %d, want %d kept for the retry", b.ReservedMicros, highMicros)
	}

	if err := r.ex.ExecuteAction(r.ctx, id); err != nil {
		t.Fatalf("retried ExecuteAction = %v", err)
	}
	a := r.action(id)
	if a.Status != approvals.StatusExecuted {
		t.Errorf("after the retry: action %s (%s), want executed", a.Status, a.Failure)
	}
	calls := r.hooks.callsOf("issue_refund")
	if len(calls) != 4 {
		t.Errorf("issue_refund attempts = %d, want 4 (3 failed, 1 succeeded)", len(calls))
	}
	for i, c := range calls {
		if c.IdempotencyKey != a.IdempotencyKey {
			t.Errorf("attempt %d used key %s, want the action's key %s", i+1, c.IdempotencyKey, a.IdempotencyKey)
		}
	}
	if n := r.effects("issue_refund"); n != 1 {
		t.Errorf("%d refunds issued, want 1", n)
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Errorf("after the retry: budget reserved %d, want 0", b.ReservedMicros)
	}
}

// The executor runs approved actions only.
func TestExecuteActionLeavesUndecidedActionsAlone(t *testing.T) {
	tests := []struct {
		name     string
		decision string // "" for none
		status   string
		journey  string
	}{
		{"pending", "", approvals.StatusPending, journeys.StatusAwaitingApproval},
		{"rejected", approvals.Reject, approvals.StatusRejected, journeys.StatusRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			out := r.pending(refundRequest)
			if tt.decision != "" {
				if err := r.decide(approver, out.Action.ID, tt.decision); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.ex.ExecuteAction(r.ctx, out.Action.ID); err != nil {
				t.Errorf("ExecuteAction = %v, want nil (nothing to do)", err)
			}
			if a := r.action(out.Action.ID); a.Status != tt.status {
				t.Errorf("action %s, want %s", a.Status, tt.status)
			}
			if j := r.journey(out.Journey.ID); j.Status != tt.journey {
				t.Errorf("journey %s, want %s", j.Status, tt.journey)
			}
			if n := len(r.hooks.callsOf("issue_refund")); n != 0 {
				t.Errorf("issue_refund called %d times, want never", n)
			}
		})
	}
}
