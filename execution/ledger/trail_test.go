package ledger

import (
	"reflect"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
)

func TestReconciliation(t *testing.T) {
	entry := func(s State, attempts int, review bool) *Entry {
		return &Entry{State: s, Attempts: attempts, NeedsReview: review}
	}
	tests := []struct {
		name     string
		status   string
		external bool
		e        *Entry
		want     string
		settled  bool
	}{
		{"pending", approvals.StatusPending, false, nil, "Nothing to reconcile yet: the action waits for approval.", true},
		{"rejected", approvals.StatusRejected, false, nil, "Nothing to reconcile: the action was never approved, so no effect was intended.", true},
		{"expired", approvals.StatusExpired, false, nil, "Nothing to reconcile: the action was never approved, so no effect was intended.", true},
		{"cancelled", approvals.StatusCancelled, false, nil, "Nothing to reconcile: the action was never approved, so no effect was intended.", true},
		{"executed by the agent", approvals.StatusExecuted, true, nil, "The agent executes this action itself and reports the result; Warden's ledger has no record of it.", true},
		{"failed at the agent", approvals.StatusFailed, true, nil, "The agent executes this action itself and reports the result; Warden's ledger has no record of it.", true},
		{"executed without a record", approvals.StatusExecuted, false, nil, "The action was approved but the ledger has no record of its effect.", false},
		{"approved without a record", approvals.StatusApproved, false, nil, "The action was approved but the ledger has no record of its effect.", false},
		{"failed without a record", approvals.StatusFailed, false, nil, "The action was approved but the ledger has no record of its effect.", false},
		{"executed once", approvals.StatusExecuted, false, entry(Recorded, 1, false), "The ledger recorded the effect once, after 1 provider call, and the action is executed.", true},
		{"executed after retries", approvals.StatusExecuted, false, entry(Recorded, 3, false), "The ledger recorded the effect once, after 3 provider calls, and the action is executed.", true},
		{"refused by the provider", approvals.StatusFailed, false, entry(Failed, 1, false), "The provider refused the call; the ledger and the action both record the failure.", true},
		{"failed before the call", approvals.StatusFailed, false, entry(Intended, 0, false), "The action failed before any provider call; the ledger shows the effect was never attempted.", true},
		{"queued", approvals.StatusApproved, false, entry(Intended, 0, false), "The effect is intended and queued to run.", false},
		{"needs review", approvals.StatusExecuting, false, entry(Reserved, 1, true), "The outcome is unknown: a provider call may have happened and the provider could not confirm it. It needs review.", false},
		{"in flight", approvals.StatusExecuting, false, entry(Reserved, 2, false), "A provider call is in flight or will be retried with the same key (2 provider calls so far).", false},
		{"recorded, not yet completed", approvals.StatusExecuting, false, entry(Recorded, 1, false), "The ledger recorded the effect but the action is executing: Warden is completing it.", false},
		{"ledger failed, action executed", approvals.StatusExecuted, false, entry(Failed, 1, false), "The ledger says failed while the action is executed.", false},
		{"ledger failed, action pending", approvals.StatusPending, false, entry(Failed, 1, false), "The ledger says failed while the action is awaiting approval.", false},
	}
	for _, tt := range tests {
		a := approvals.Action{Status: tt.status, External: tt.external}
		got, settled := Reconciliation(a, tt.e)
		if got != tt.want || settled != tt.settled {
			t.Errorf("%s: Reconciliation = %q, %v; want %q, %v", tt.name, got, settled, tt.want, tt.settled)
		}
	}
}

func TestFailureKind(t *testing.T) {
	tests := []struct {
		name     string
		external bool
		e        *Entry
		want     string
	}{
		{"reported by the agent", true, nil, "Reported failed by the agent, which executes this action itself."},
		{"reported by the agent, with a record", true, &Entry{State: Failed}, "Reported failed by the agent, which executes this action itself."},
		{"no record", false, nil, "Failed without a ledger record: nothing was sent to the provider."},
		{"refused by the provider", false, &Entry{State: Failed}, "Refused by the provider: a final answer, not retried."},
		{"before the call", false, &Entry{State: Intended}, "Stopped before any provider call: nothing was sent."},
		{"unsettled", false, &Entry{State: Reserved}, "Failed after a provider call whose outcome is not settled: the ledger asks the provider again."},
		{"recorded", false, &Entry{State: Recorded}, "Failed while the ledger says recorded."},
	}
	for _, tt := range tests {
		got := FailureKind(approvals.Action{Status: approvals.StatusFailed, External: tt.external}, tt.e)
		if got != tt.want {
			t.Errorf("%s: FailureKind = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTimingOf(t *testing.T) {
	decided := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	executed := decided.Add(850 * time.Millisecond)
	tests := []struct {
		name string
		a    approvals.Action
		e    *Entry
		want Timing
	}{
		{"executed, with a record", approvals.Action{DecidedAt: &decided, ExecutedAt: &executed}, &Entry{Attempts: 2}, Timing{AfterApproval: 850 * time.Millisecond, Timed: true, Calls: 2}},
		{"executed by the agent", approvals.Action{DecidedAt: &decided, ExecutedAt: &executed}, nil, Timing{AfterApproval: 850 * time.Millisecond, Timed: true}},
		{"failed before it ran", approvals.Action{DecidedAt: &decided}, &Entry{Attempts: 1}, Timing{Calls: 1}},
		{"never decided", approvals.Action{}, nil, Timing{}},
	}
	for _, tt := range tests {
		if got := TimingOf(tt.a, tt.e); got != tt.want {
			t.Errorf("%s: TimingOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestInFlight(t *testing.T) {
	tests := []struct {
		name string
		e    *Entry
		want []string
	}{
		{"no record", nil, nil},
		{"not called yet", &Entry{State: Intended}, []string{"0 provider calls so far"}},
		{"one call", &Entry{State: Reserved, Attempts: 1}, []string{"1 provider call so far"}},
		{"retrying", &Entry{State: Reserved, Attempts: 2, Error: "transient: timeout"}, []string{"2 provider calls so far", "Last error: transient: timeout"}},
	}
	for _, tt := range tests {
		if got := InFlight(tt.e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: InFlight = %q, want %q", tt.name, got, tt.want)
		}
	}
}
