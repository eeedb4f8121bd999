package approvals

import (
	"fmt"

	"github.com/wardenhq/warden/audit"
)

// TrailWarnings are disagreements between an action's records that an
// auditor should follow up, each a sentence: events are the audit events
// whose subject the action is, decisions its decision rows. Decide writes
// every decision with its audit event, so their counts must match, and an
// action has at least the event of its request.
func TrailWarnings(events []audit.Event, decisions []Decided) []string {
	var decided int
	for _, e := range events {
		switch e.Verb {
		case "action.approval_recorded", "action.approved", "action.rejected":
			decided++
		}
	}
	var out []string
	if decided != len(decisions) {
		out = append(out, fmt.Sprintf("The action has %d recorded decisions but the audit chain records %d. Verify the chain.", len(decisions), decided))
	}
	if len(events) == 0 {
		out = append(out, "The audit chain records no event for this action, not even its request. Verify the chain.")
	}
	return out
}
