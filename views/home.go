package views

import (
	"strconv"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/tenants"
)

// HomeView is the signed-in user's start page: a to-do list for each role
// they hold. A section is nil for a role the user does not hold.
type HomeView struct {
	Now time.Time
	// Counts are shown only to users with a role: someone Warden gave no
	// role sees nothing about the system.
	Counts      bool
	Tenants     int64 // tenants within the user's scope
	AuditEvents int64
	// Alerts firing, unacknowledged first, for on-call and admins (nil
	// for others).
	Alerts   []AlertSummary
	Approver *ApproverHome
	Oncall   *OncallHome
	Auditor  *AuditorHome
	Admin    *AdminHome
}

// AdminHome is the work only admins do: jobs that failed for good, and
// keys about to expire.
type AdminHome struct {
	FailedJobs      []FailedJob // the newest
	FailedJobsTotal int
	// BreakGlass are loosening changes one admin applied alone that nobody
	// reviewed yet; PendingChanges counts those waiting for a second admin.
	BreakGlass     []changes.Change
	PendingChanges int
	Expiring       []ExpiringKey // soonest first
	ExpiryWindow   time.Duration
}

// ExpiringKey is an agent key that stops working soon.
type ExpiringKey struct {
	ID, Name, Tenant string
	ExpiresAt        time.Time
}

// ApproverHome is an approver's inbox.
type ApproverHome struct {
	Waiting       []HomeAction // waiting for this approver's decision
	WaitingTotal  int
	OnOthers      []HomeAction // approved by them, waiting for another approver
	OnOthersTotal int
	Recent        []HomeDecision // their own latest decisions
}

// HomeAction is a pending action in an inbox.
type HomeAction struct {
	ID, Summary, Tenant string
	ApprovalsGiven      int
	ApprovalsRequired   int
	ExpiresAt           time.Time
}

// HomeDecision is one of the approver's decisions and its outcome.
type HomeDecision struct {
	ActionID, Summary, Tenant string
	Decision                  string // approve or reject
	Status                    string // the action's status now
	At                        time.Time
}

// OncallHome is what on-call must look at in their tenants.
type OncallHome struct {
	Failed        []ReviewItem // the oldest failed actions
	FailedTotal   int
	ReviewEffects int // effects not confirmed with their provider
	Frozen        []tenants.Tenant
	Off           []SwitchedOff // tools and skills switched off
}

// SwitchedOff is a tool or skill that is switched off.
type SwitchedOff struct {
	Kind, Name string // kind: tool or skill
	Tenant     string // a tool switched off for this tenant only
	Reason     string
	At         time.Time
}

// AuditorHome is the audit chain's state and the latest exports.
type AuditorHome struct {
	Chain   ChainStatus
	Exports []HomeExport
}

// HomeExport is one audit export recorded in the trail.
type HomeExport struct {
	Seq    int64
	At     time.Time
	By     string
	Format string
	Rows   int64
	SHA256 string
}

// Decided says a decision in the past tense.
func (d HomeDecision) Decided() string {
	if d.Decision == "reject" {
		return "You rejected"
	}
	return "You approved"
}

// Outcome says where the decided action stands now, in words.
func (d HomeDecision) Outcome() string { return statusWords(d.Status) }

// statusWords turns an action's or a journey's status into words people
// read: actions' through approvals.StatusWord (one wording everywhere),
// plus the journey statuses an action does not have.
func statusWords(status string) string {
	switch status {
	case "running":
		return "Running"
	case "awaiting_approval":
		return "Awaiting approval"
	case "completed":
		return "Completed"
	}
	return approvals.StatusWord(status)
}

// approvalsLeft says how many more approvals a pending action needs.
func approvalsLeft(a HomeAction) string {
	left := a.ApprovalsRequired - a.ApprovalsGiven
	switch {
	case left <= 0:
		return "approved"
	case left == 1:
		return "needs 1 more approval"
	}
	return "needs " + strconv.Itoa(left) + " more approvals"
}

// tenantSuffix tells apart the test ids of one tool switched off for
// several tenants.
func tenantSuffix(tenant string) string {
	if tenant == "" {
		return ""
	}
	return "-" + tenant
}
