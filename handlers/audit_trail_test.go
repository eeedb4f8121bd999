package handlers

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/execution/ledger"
)

func TestLedgerReconciliation(t *testing.T) {
	entry := func(s ledger.State, attempts int, review bool) *ledger.Entry {
		return &ledger.Entry{State: s, Attempts: attempts, NeedsReview: review}
	}
	tests := []struct {
		name     string
		status   string
		external bool
		e        *ledger.Entry
		want     string // the start of the sentence
		ok       bool
	}{
		{"pending", approvals.StatusPending, false, nil, "Nothing to reconcile yet", true},
		{"rejected", approvals.StatusRejected, false, nil, "Nothing to reconcile: the action was never approved", true},
		{"expired", approvals.StatusExpired, false, nil, "Nothing to reconcile: the action was never approved", true},
		{"cancelled", approvals.StatusCancelled, false, nil, "Nothing to reconcile: the action was never approved", true},
		{"external", approvals.StatusExecuted, true, nil, "The agent executes this action itself", true},
		{"approved without a record", approvals.StatusExecuted, false, nil, "The action was approved but the ledger has no record", false},
		{"failed without a record", approvals.StatusFailed, false, nil, "The action was approved but the ledger has no record", false},
		{"executed once", approvals.StatusExecuted, false, entry(ledger.Recorded, 1, false), "The ledger recorded the effect once, after 1 provider call", true},
		{"executed after retries", approvals.StatusExecuted, false, entry(ledger.Recorded, 3, false), "The ledger recorded the effect once, after 3 provider calls", true},
		{"refused by the provider", approvals.StatusFailed, false, entry(ledger.Failed, 1, false), "The provider refused the call", true},
		{"failed before the call", approvals.StatusFailed, false, entry(ledger.Intended, 0, false), "The action failed before any provider call", true},
		{"queued", approvals.StatusApproved, false, entry(ledger.Intended, 0, false), "The effect is intended and queued", false},
		{"in flight", approvals.StatusExecuting, false, entry(ledger.Reserved, 2, false), "A provider call is in flight or will be retried with the same key (2 provider calls so far)", false},
		{"needs review", approvals.StatusExecuting, false, entry(ledger.Reserved, 1, true), "The outcome is unknown", false},
		{"recorded, not yet completed", approvals.StatusExecuting, false, entry(ledger.Recorded, 1, false), "The ledger recorded the effect but the action is executing", false},
		{"disagreement", approvals.StatusExecuted, false, entry(ledger.Failed, 1, false), "The ledger says failed while the action is executed", false},
		{"pending, in words", approvals.StatusPending, false, entry(ledger.Failed, 1, false), "The ledger says failed while the action is awaiting approval", false},
	}
	for _, tt := range tests {
		a := approvals.Action{Status: tt.status, External: tt.external}
		got, ok := ledgerReconciliation(a, tt.e)
		if !strings.HasPrefix(got, tt.want) || ok != tt.ok {
			t.Errorf("%s: ledgerReconciliation = %q, %v; want %q…, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFailureKind(t *testing.T) {
	tests := []struct {
		name     string
		external bool
		e        *ledger.Entry
		want     string
	}{
		{"agent", true, nil, "Reported failed by the agent"},
		{"no record", false, nil, "Failed without a ledger record"},
		{"provider", false, &ledger.Entry{State: ledger.Failed}, "Refused by the provider: a final answer"},
		{"before the call", false, &ledger.Entry{State: ledger.Intended}, "Stopped before any provider call"},
		{"unsettled", false, &ledger.Entry{State: ledger.Reserved}, "Failed after a provider call whose outcome is not settled"},
	}
	for _, tt := range tests {
		got := failureKind(approvals.Action{Status: approvals.StatusFailed, External: tt.external}, tt.e)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: failureKind = %q, want %q…", tt.name, got, tt.want)
		}
	}
}

func TestTrailSteps(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 12, 0, s, 0, time.UTC) }
	ev := func(seq int64, verb, action string) audit.Event {
		return audit.Event{Seq: seq, Time: at(int(seq)), Verb: verb, Subject: audit.Subject{Type: "action", ID: action}}
	}
	decided, executed := at(5), at(5).Add(850*time.Millisecond)
	receipt := json.RawMessage(`{"refund_id":"rf_1"}`)
	orig := trailPart{
		Action: approvals.Action{ID: "act_1", Status: approvals.StatusExecuted, Receipt: receipt, DecidedAt: &decided, ExecutedAt: &executed},
		Events: []audit.Event{ev(2, "action.requested", "act_1"), ev(5, "action.approved", "act_1"), ev(6, "action.executed", "act_1")},
		Ledger: &ledger.Entry{State: ledger.Recorded, Attempts: 1},
	}
	rev := trailPart{
		Action: approvals.Action{ID: "act_2", Status: approvals.StatusExecuting, Compensates: "act_1"},
		Events: []audit.Event{ev(8, "action.requested", "act_2"), ev(9, "action.approval_recorded", "act_2"), ev(11, "action.approved", "act_2")},
		Ledger: &ledger.Entry{State: ledger.Reserved, Attempts: 2, Error: "transient: timeout", UpdatedAt: at(12)},
	}
	// A second reversal, asked for earlier, that the provider refused.
	failed := trailPart{
		Action: approvals.Action{ID: "act_3", Status: approvals.StatusFailed},
		Events: []audit.Event{ev(7, "action.requested", "act_3"), ev(10, "action.failed", "act_3")},
		Ledger: &ledger.Entry{State: ledger.Failed, Attempts: 1},
	}
	steps := trailSteps([]trailPart{orig, rev, failed})
	type row struct {
		Seq, Kind, Title, Action string
		Reversal                 bool
		Notes                    []string
		Receipt                  string
		Time                     time.Time
	}
	var got []row
	for _, s := range steps {
		got = append(got, row{s.Seq(), s.Kind, s.Title, s.ActionID, s.Reversal, s.Notes, string(s.Receipt), s.Time})
	}
	want := []row{
		{"2", "requested", "Requested", "act_1", false, nil, "", at(2)},
		{"5", "approved", "Approved", "act_1", false, nil, "", at(5)},
		{"6", "executed", "Executed", "act_1", false, []string{"Done 850 ms after the final approval; 1 provider call."}, string(receipt), at(6)},
		{"7", "requested", "Requested", "act_3", true, nil, "", at(7)},
		{"8", "requested", "Requested", "act_2", true, nil, "", at(8)},
		{"9", "approval_recorded", "Approval recorded", "act_2", true, nil, "", at(9)},
		{"10", "failed", "Failed", "act_3", true, []string{"Refused by the provider: a final answer, not retried.", "1 provider call."}, "", at(10)},
		{"11", "approved", "Approved", "act_2", true, nil, "", at(11)},
		{"—", "executing", "Executing", "act_2", true, []string{"2 provider calls so far", "Last error: transient: timeout"}, "", at(12)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trailSteps =\n%+v\nwant\n%+v", got, want)
	}
	for i, s := range steps[:len(steps)-1] {
		if s.Event == nil || strconv.FormatInt(s.Event.Seq, 10) != s.Seq() {
			t.Errorf("step %d carries event %+v", i, s.Event)
		}
	}
}

func TestTrailWarnings(t *testing.T) {
	p := trailPart{Events: []audit.Event{{Verb: "action.requested"}, {Verb: "action.approval_recorded"}, {Verb: "action.approved"}}}
	two := []approvals.Decided{{Decision: approvals.Approve}, {Decision: approvals.Approve}}
	if w := trailWarnings(p, two); len(w) != 0 {
		t.Errorf("matching records warn %v", w)
	}
	if w := trailWarnings(p, two[:1]); len(w) != 1 || !strings.Contains(w[0], "1 recorded decisions but the audit chain records 2") {
		t.Errorf("a missing decision row warns %v", w)
	}
	if w := trailWarnings(trailPart{}, nil); len(w) != 1 || !strings.Contains(w[0], "no event for this action") {
		t.Errorf("an action without events warns %v", w)
	}
}
