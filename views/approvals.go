package views

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/tenants"
)

// ApprovalQueueView is one page of the approval queue.
type ApprovalQueueView struct {
	Rows     []approvals.Row
	Tenants  []tenants.Tenant // in scope, for the filter
	Tools    []string         // for the filter
	Filter   ApprovalFilter
	Errors   FieldErrors // what is wrong with the filter; no rows are listed then
	Total    int         // pending actions matching the filter
	PrevPage string
	NextPage string
	Self     string // this page, for the Refresh link
	RowsURL  string // the rows partial queue.js refreshes from
	Filtered bool
	Now      time.Time
	// Approved marks the rows the viewer has already approved: they wait
	// for another approver, and are not offered again.
	Approved map[string]bool
	// Claims are the Takes in force on the rows, by action id.
	Claims map[string]approvals.Claim
	// CanTake marks the rows the viewer may take (approvals.MayTake): only
	// they offer Take.
	CanTake map[string]bool
	// ViewerID and CSRF let a row offer Take (the rows partial has no Page).
	ViewerID string
	CSRF     string
}

// ApprovalFilter is the queue's filter form, as typed.
type ApprovalFilter struct {
	Tenant, Tool, Min, Max, Sort string
}

// ApprovalSorts are the queue's orders, with their labels.
var ApprovalSorts = []struct{ Value, Label string }{
	{approvals.SortExpiry, "Expiring soonest"},
	{approvals.SortAge, "Oldest first"},
	{approvals.SortAmount, "Largest amount"},
}

// ApprovalView is one action as its page shows it.
type ApprovalView struct {
	Action     approvals.Action
	TenantSlug string
	Decisions  []approvals.Decided
	Journey    *journeys.Journey // the journey that asked, when there is one
	Original   *approvals.Action // the action this one reverses
	Reversal   *approvals.Action // the action that reverses this one
	// Approvers are the approvals among Decisions with the issuer and
	// e-mail each approver signed in with (approvals.Approvers), so the
	// page refuses the same person under a second sign-in as the decision
	// would.
	Approvers []approvals.Approver
	// CompensatingTool is the catalog's compensating tool of a
	// compensatable action.
	CompensatingTool string
	// CompensationOff: the compensating tool is switched off, so a
	// reversal cannot be requested now (the page says why).
	CompensationOff bool
	RequestedBy     string // display name of the console user who asked
	// ToolSwitch is the action's tool's kill switch, Freeze its tenant's:
	// they block execution, so approvers are warned and a blocked action
	// says so.
	ToolSwitch catalog.SwitchState
	Freeze     tenants.Freeze
	// OnTarget are the tenant's other live or executed actions of the same
	// tool on the same target, shown to approvers of a pending action
	// ("ORD-1002 was already refunded").
	OnTarget []approvals.Action
	// Refunded is what other actions of the same tool already refunded
	// of the action's target, against its total where Warden knows it
	// ("Already refunded $2,400.00 of $2,400.00 on ORD-1004."), while the
	// action can still run; nil otherwise.
	Refunded *approvals.Refunded
	// KeyName is the name of the virtual key the agent asked with ("" when
	// the key is gone).
	KeyName        string
	ViewerApproved bool   // the viewer already approved it
	CanRetry       bool   // "Retry execution" is offered
	CanDecide      bool   // the forms are shown
	Blocked        string // why this approver cannot decide, when pending
	CanReverse     bool
	// What the page links to, set by Links from the route table: a link
	// is shown only when it opens for the viewer.
	CanTrace      bool // the journey's trace
	CanAuditTrail bool // the action's decision trail
	Crumb         Link // the breadcrumb: the queue, Traces or Home
	Comment       string
	Errors        FieldErrors
	Notice        string
	Now           time.Time
	// Claim is the approver's Take in force on a pending action ("Bob is
	// reviewing"), ClaimMine when the viewer holds it; Owners are the
	// owners of the runbooks that act on its tool or skill.
	Claim     *approvals.Claim
	ClaimMine bool
	Owners    []runbooks.Owned
	// ToolOwner is who owns the action's tool (set on its admin page).
	ToolOwner string
	// KeyOwner names who created the agent's key that proposed the action
	// ("" for a key made on the command line): a route naming "owner"
	// e-mails them when the action expires undecided.
	KeyOwner string
}

// ApprovalConflictView explains a decision that could not be recorded
// because the action is no longer what the approver saw.
type ApprovalConflictView struct {
	Action  approvals.Action
	Title   string
	Message string
}

// ReverseConfirmView asks before requesting a business rollback.
type ReverseConfirmView struct {
	Action           approvals.Action
	TenantSlug       string
	CompensatingTool string
	Reversal         *approvals.Action // already requested
	Reason           string            // what was typed, when the page comes back with an error
	Errors           FieldErrors
}

func (v ReverseConfirmView) confirm() ConfirmView {
	back := templ.SafeURL("/approvals/" + v.Action.ID)
	c := ConfirmView{
		Back:      back,
		BackLabel: "Back to the action",
		Title:     text("Reverse this action?"),
		Summary:   v.Action.Summary,
		Effect:    reverseEffect(v),
		Action:    templ.SafeURL("/approvals/" + v.Action.ID + "/reverse"),
		Submit:    "Request the reversal",
		SubmitID:  "confirm-reverse",
		Danger:    true,
		Cancel:    back,
		Fields:    reasonField("reverse-reason", "Say why, e.g. the customer returned the goods: the reversal's approvers read it, and it is kept in the audit trail.", v.Reason, v.Errors),
	}
	switch r := v.Reversal; {
	case r != nil && approvals.Live(r.Status):
		c.Warning = reversalRequested(*r)
	case r != nil:
		c.Warning, c.WarningID = reversalEnded(*r), "earlier-reversal"
	}
	return c
}

// ActionAmount is the action's amount for people, or "—" without one.
func ActionAmount(a approvals.Action) string {
	m, ok := a.Amount()
	if !ok {
		return "—"
	}
	return money.Format(m)
}

// ApprovalCount says how far an action's approvals are: "1 of 2".
func ApprovalCount(a approvals.Action) string {
	return strconv.Itoa(a.ApprovalsGiven) + " of " + strconv.Itoa(a.ApprovalsRequired)
}

// Age says how long ago t was, coarsely: "just now", "5m", "2h 5m",
// "3d 4h".
func Age(now, t time.Time) string {
	d := now.Sub(t)
	if d < time.Minute {
		return "just now"
	}
	return span(d) + " ago"
}

// ExpiresIn says how long until t: "in 23h 59m", "in under a minute", or
// "expired". queue.js writes the same words as it counts down.
func ExpiresIn(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return "in under a minute"
	}
	return "in " + span(d)
}

// span writes a duration of at least a minute in its two largest units.
func span(d time.Duration) string {
	m := int64(d / time.Minute)
	days, hours, mins := m/(24*60), m/60%24, m%60
	switch {
	case days > 0:
		return strconv.FormatInt(days, 10) + "d " + strconv.FormatInt(hours, 10) + "h"
	case hours > 0:
		return strconv.FormatInt(hours, 10) + "h " + strconv.FormatInt(mins, 10) + "m"
	default:
		return strconv.FormatInt(mins, 10) + "m"
	}
}

// PrettyJSON indents JSON for reading; anything else is shown as it is.
func PrettyJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// actionStatusClass colours a status: done is green, stopped or failed is
// red, anything still moving is amber.
func actionStatusClass(status string) string {
	switch status {
	case approvals.StatusExecuted:
		return "badge badge-ok"
	case approvals.StatusFailed, approvals.StatusRejected, approvals.StatusExpired, approvals.StatusCancelled:
		return "badge badge-bad"
	default:
		return "badge badge-warn"
	}
}

func impactClass(i risk.Impact) string {
	switch i {
	case risk.ImpactHigh:
		return "badge badge-bad"
	case risk.ImpactMedium:
		return "badge badge-warn"
	default:
		return "badge badge-ok"
	}
}

// statusSentence says in words what an action's status means.
func statusSentence(a approvals.Action) string {
	switch a.Status {
	case approvals.StatusPending:
		return "Waiting for approval: " + ApprovalCount(a) + " approvals so far."
	case approvals.StatusApproved:
		return "Approved. It is queued to run exactly once."
	case approvals.StatusExecuting:
		return "Approved and running now."
	case approvals.StatusExecuted:
		return "Approved and executed."
	case approvals.StatusFailed:
		return "Approved, but it failed when it ran. It needs review."
	case approvals.StatusRejected:
		return "Rejected. It will not run."
	case approvals.StatusExpired:
		return "Expired before enough approvers decided. It will not run."
	case approvals.StatusCancelled:
		return "Withdrawn by the agent that asked. It will not run."
	}
	return a.Status
}

// decisionClass colours a recorded decision.
func decisionClass(d string) string {
	if d == approvals.Approve {
		return "badge badge-ok"
	}
	return "badge badge-bad"
}

// decisionLabel is the past tense of a decision.
func decisionLabel(d string) string {
	switch d {
	case approvals.Approve:
		return "approved"
	case approvals.Reject:
		return "rejected"
	}
	return d
}

// hasReversibility reports whether the action's undo story is worth a
// sentence (every action has one, but older rows may not say).
func hasReversibility(a approvals.Action) bool { return a.Reversibility != "" }

func pendingCount(n int) string {
	if n == 1 {
		return "1 pending action"
	}
	return strconv.Itoa(n) + " pending actions"
}

// shortDigest is enough of a digest to compare by eye.
func shortDigest(d string) string {
	if len(d) > 12 {
		return d[:12] + "…"
	}
	return d
}
