package approvals

import "strings"

// statusWords are an action's statuses as people read them.
var statusWords = map[string]string{
	StatusPending:   "Awaiting approval",
	StatusApproved:  "Approved",
	StatusExecuting: "Executing",
	StatusExecuted:  "Executed",
	StatusFailed:    "Failed",
	StatusRejected:  "Rejected",
	StatusExpired:   "Expired",
	StatusCancelled: "Cancelled",
}

// StatusWord is an action's status in words ("Awaiting approval"), for
// every page that shows one: the queue, the action page, traces and the
// audit trail. A status it does not know is written with spaces for
// underscores and a capital, never in snake_case.
func StatusWord(status string) string {
	if w, ok := statusWords[status]; ok {
		return w
	}
	s := strings.ReplaceAll(strings.TrimSpace(status), "_", " ")
	if s == "" {
		return "Unknown"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
