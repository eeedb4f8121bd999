package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals"
)

// The rules below relate an action to its ledger entry: what the two
// records say together about the effect. A decision trail shows them;
// they live here so that what counts as consistent is decided once, by
// the package that keeps the effect exactly once.

// Calls names a number of provider calls: "1 provider call", "3 provider
// calls".
func Calls(n int) string {
	if n == 1 {
		return "1 provider call"
	}
	return fmt.Sprintf("%d provider calls", n)
}

// Timing is what the records say about how an action ran.
type Timing struct {
	// AfterApproval is how long after its final approval the action ran;
	// Timed says whether it is known (the action ran and was decided).
	AfterApproval time.Duration
	Timed         bool
	// Calls is the number of provider calls the ledger counted, 0 without
	// a record.
	Calls int
}

// TimingOf says how long after its final approval a ran and how many
// provider calls its ledger entry e (nil without one) counted.
func TimingOf(a approvals.Action, e *Entry) Timing {
	var t Timing
	if a.ExecutedAt != nil && a.DecidedAt != nil {
		t.AfterApproval, t.Timed = a.ExecutedAt.Sub(*a.DecidedAt), true
	}
	if e != nil {
		t.Calls = e.Attempts
	}
	return t
}

// FailureKind classifies a failed action by what its ledger entry e (nil
// without one) knows: the provider refused it (final), it stopped before
// any provider call (the tool was switched off, the tenant frozen), or the
// agent reported it. The answer is a sentence.
func FailureKind(a approvals.Action, e *Entry) string {
	switch {
	case a.External:
		return "Reported failed by the agent, which executes this action itself."
	case e == nil:
		return "Failed without a ledger record: nothing was sent to the provider."
	case e.State == Failed:
		return "Refused by the provider: a final answer, not retried."
	case e.State == Intended:
		return "Stopped before any provider call: nothing was sent."
	case e.State == Reserved:
		return "Failed after a provider call whose outcome is not settled: the ledger asks the provider again."
	}
	return "Failed while the ledger says " + string(e.State) + "."
}

// Reconciliation says, in a sentence, whether the ledger entry e (nil
// without one) and the action a agree about the effect, and whether that
// agreement is settled (true) or something an auditor should look at or
// wait for (false).
func Reconciliation(a approvals.Action, e *Entry) (string, bool) {
	if e == nil {
		switch {
		case a.Status == approvals.StatusPending:
			return "Nothing to reconcile yet: the action waits for approval.", true
		case !approvals.Live(a.Status) && a.Status != approvals.StatusFailed:
			return "Nothing to reconcile: the action was never approved, so no effect was intended.", true
		case a.External:
			return "The agent executes this action itself and reports the result; Warden's ledger has no record of it.", true
		}
		return "The action was approved but the ledger has no record of its effect.", false
	}
	switch {
	case e.State == Recorded && a.Status == approvals.StatusExecuted:
		return fmt.Sprintf("The ledger recorded the effect once, after %s, and the action is executed.", Calls(e.Attempts)), true
	case e.State == Failed && a.Status == approvals.StatusFailed:
		return "The provider refused the call; the ledger and the action both record the failure.", true
	case e.State == Intended && a.Status == approvals.StatusFailed:
		return "The action failed before any provider call; the ledger shows the effect was never attempted.", true
	case e.State == Intended && a.Status == approvals.StatusApproved:
		return "The effect is intended and queued to run.", false
	case e.State == Reserved && e.NeedsReview:
		return "The outcome is unknown: a provider call may have happened and the provider could not confirm it. It needs review.", false
	case e.State == Reserved:
		return fmt.Sprintf("A provider call is in flight or will be retried with the same key (%s so far).", Calls(e.Attempts)), false
	case e.State == Recorded:
		return "The ledger recorded the effect but the action is " + strings.ToLower(approvals.StatusWord(a.Status)) + ": Warden is completing it.", false
	}
	return "The ledger says " + strings.ReplaceAll(string(e.State), "_", " ") + " while the action is " + strings.ToLower(approvals.StatusWord(a.Status)) + ".", false
}

// InFlight says what the ledger entry e knows of an action that is
// executing right now: the provider calls so far and the last error, if
// any. Nil without an entry.
func InFlight(e *Entry) []string {
	if e == nil {
		return nil
	}
	notes := []string{Calls(e.Attempts) + " so far"}
	if e.Error != "" {
		notes = append(notes, "Last error: "+e.Error)
	}
	return notes
}
