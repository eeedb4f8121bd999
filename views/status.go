package views

import (
	"fmt"
	"time"
)

// StatusView is the on-call status page.
type StatusView struct {
	Version         string
	DevMode         bool
	Uptime          string
	DatabaseOK      bool
	DatabaseMessage string
	SchemaVersion   int
	ProviderReady   bool
	ProviderIssuer  string
	ProviderError   string
	AuditEvents     int64
	// NeedsReview lists executed-or-failed work a person must look at:
	// failed actions and effects whose outcome the reconciler could not
	// learn.
	FailedActions []ReviewItem
	FailedTotal   int    // failed actions in the viewer's tenants, all pages
	NextPage      string // later failed actions, empty on the last page
	PrevPage      string // earlier ones, empty on the first page
	ReviewEffects int
	PendingJobs   int
	// FailedJobs are the newest jobs that failed for good, shown to
	// viewers of all tenants only (a job may concern any tenant);
	// FailedJobsShown says whether this viewer sees them.
	FailedJobs      []FailedJob
	FailedJobsTotal int
	FailedJobsShown bool
	Notice          string
}

// FailedJob is a job that failed for good, for the status page.
type FailedJob struct {
	ID                  int64
	Kind                string // as words (JobKind)
	Permanent           bool
	Attempts            int
	Error               string // redacted
	At                  time.Time
	ActionID, JourneyID string
}

// jobKinds names the job kinds in words.
var jobKinds = map[string]string{
	"execute_action":   "Execute an approved action",
	"action_callback":  "Call the agent back",
	"continue_journey": "Continue a model-driven journey",
	"expire_action":    "Expire a pending action",
	"reconcile":        "Reconcile the effect ledger",
	"expire_overdue":   "Expire overdue actions and changes",
	"apply_change":     "Apply an approved change",
	"sweep":            "End journeys a dead process left running",
	"evaluate_alerts":  "Evaluate alert rules",
	"check_canary":     "Check the canary",
	"trace_retention":  "Purge traces past retention",
	"notify_deliver":   "Send a notification",
}

// JobKind is a job kind in words.
func JobKind(kind string) string {
	if w, ok := jobKinds[kind]; ok {
		return w
	}
	return fieldLabel(kind)
}

// ReviewItem is an action that needs a person.
type ReviewItem struct {
	ID, Summary, Tenant, Reason string
	RequestedAt                 time.Time
}

// failedJobsSummary introduces the failed jobs table.
func failedJobsSummary(v StatusView) string {
	shown := ""
	if v.FailedJobsTotal > len(v.FailedJobs) {
		shown = fmt.Sprintf(" (the newest %d shown)", len(v.FailedJobs))
	}
	return fmt.Sprintf("%d job(s) stopped retrying, newest first%s. Retry runs a job once more, at once: jobs are safe to run again, so one whose work was done meanwhile changes nothing.",
		v.FailedJobsTotal, shown)
}
