package views

import (
	"errors"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
)

// For fills in what user may do on the action page, from the data the
// page shows: the Approve and Reject forms (the approval policy the
// decision itself applies), Reverse and Retry execution. It is pure, so
// each state of an action can be checked for each role without a server.
// The page's links are Links's.
func (v ApprovalView) For(user identity.Principal) ApprovalView {
	a := v.Action
	v.ViewerApproved = false
	var approvedBy []approvals.Approver
	for _, d := range v.Decisions {
		if d.Decision == approvals.Approve {
			approvedBy = append(approvedBy, v.approver(d.PrincipalID))
			if d.PrincipalID == user.ID {
				v.ViewerApproved = true
			}
		}
	}
	v.CanDecide, v.Blocked = false, ""
	if user.HasRole(identity.RoleApprover) && a.Status == approvals.StatusPending {
		if err := approvals.Check(user, a, v.TenantSlug, approvedBy, a.PayloadDigest, v.Now); err != nil {
			v.Blocked = RefusalSentence(err)
		} else {
			v.CanDecide = true
		}
	}
	v.CanReverse = approvals.MayReverse(user, a, v.TenantSlug) == nil && (v.Reversal == nil || !approvals.Live(v.Reversal.Status))
	v.CanRetry = approvals.BlockOf(a) != "" && v.BlockLifted() &&
		user.HasAnyRole(identity.RoleOncall, identity.RoleAdmin) && user.InTenant(v.TenantSlug)
	return v
}

// approver is the approval of id with the issuer and e-mail it signed in
// with, when Approvers has them.
func (v ApprovalView) approver(id string) approvals.Approver {
	for _, a := range v.Approvers {
		if a.ID == id {
			return a
		}
	}
	return approvals.Approver{ID: id}
}

// BlockLifted reports whether what blocks the action's execution is gone:
// its tool is on and its tenant not frozen.
func (v ApprovalView) BlockLifted() bool { return v.ToolSwitch.Enabled && !v.Freeze.Frozen }

// RefusalSentence turns a domain refusal ("you have already approved this
// action") into a sentence for the page.
func RefusalSentence(err error) string {
	s := err.Error()
	var p *problem.Error
	if errors.As(err, &p) {
		s = p.Message
	}
	if s == "" {
		return s
	}
	b := []byte(s)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	if last := b[len(b)-1]; last != '.' && last != '!' && last != '?' {
		b = append(b, '.')
	}
	return string(b)
}

// WhatHeading names the card with the tool, targets and amount: what will
// happen while it can still run, what happened once it ran, what was asked
// when it never will.
func (v ApprovalView) WhatHeading() string {
	switch v.Action.Status {
	case approvals.StatusPending, approvals.StatusApproved, approvals.StatusExecuting:
		return "What will happen"
	case approvals.StatusExecuted:
		return "What happened"
	}
	return "What was asked"
}

// WhyHeading names the card with the reason and the policy: it speaks to
// the viewer only when they can still decide, and in the present tense
// while the action still waits for approval.
func (v ApprovalView) WhyHeading() string {
	switch {
	case v.CanDecide:
		return "Why it needs you"
	case v.Action.Status == approvals.StatusPending:
		return "Why it needs approval"
	}
	return "Why it needed approval"
}

// ReasonLabel says whose reason the action carries: a person's when a
// person asked for it (a reversal), else the agent's.
func (v ApprovalView) ReasonLabel() string {
	if v.Action.RequestedBy != "" {
		if v.RequestedBy != "" {
			return v.RequestedBy + "'s reason"
		}
		return "Requester's reason"
	}
	return "Agent's reason"
}

// StateSentence says in words where the action stands, truthfully after
// execution and failure: a reversal counts only once it executed.
func (v ApprovalView) StateSentence() string {
	a := v.Action
	switch a.Status {
	case approvals.StatusPending:
		// The count itself is in the stat beside it ("1 of 2"), and the
		// notice after an approval says how many more: said once each.
		if v.ViewerApproved {
			return "Awaiting approval: you approved; it waits for another approver."
		}
		return "Awaiting approval: it needs " + moreApprovals(a) + "."
	case approvals.StatusExecuted:
		if r := v.Reversal; r != nil {
			switch {
			case r.Status == approvals.StatusExecuted:
				return "Executed, then reversed by " + r.ID + " (" + approvals.StatusWord(r.Status) + ")."
			case approvals.Live(r.Status):
				return "Executed. Reversal requested (" + approvals.StatusWord(r.Status) + "): " + r.ID + "."
			}
		}
		return "Approved and executed."
	case approvals.StatusFailed:
		switch approvals.BlockOf(a) {
		case approvals.BlockToolOff:
			return "Approved, but execution was blocked before anything was sent: the tool " + a.Tool + " was switched off."
		case approvals.BlockTenantFrozen:
			return "Approved, but execution was blocked before anything was sent: the tenant " + v.TenantSlug + " was frozen."
		}
		return "Approved, but it failed when it ran. It needs review."
	}
	return statusSentence(a)
}

// moreApprovals says how many approvals an action still needs: "1 more
// approval", "2 more approvals".
func moreApprovals(a approvals.Action) string {
	n := a.ApprovalsRequired - a.ApprovalsGiven
	if n <= 1 {
		return "1 more approval"
	}
	return strconv.Itoa(n) + " more approvals"
}

// ApprovalRecordedNotice is the flash after an approval that was not the
// last one needed: how many more it needs.
func ApprovalRecordedNotice(a approvals.Action) string {
	if a.Status != approvals.StatusPending {
		return ""
	}
	return "Your approval is recorded. It needs " + moreApprovals(a) + " from another approver before it runs."
}

// Event is one line of a blocked execution's story.
type Event struct {
	At   *time.Time // nil: when it came to run
	Text string
}

// BlockStory tells, in the true order of events, how the action's
// execution came to be blocked before anything was sent: when it was
// requested and approved, when its tool was switched off or its tenant
// frozen (and why), and that nothing was sent. Nil when it was not
// blocked.
func (v ApprovalView) BlockStory() []Event {
	a := v.Action
	kind := approvals.BlockOf(a)
	if kind == "" {
		return nil
	}
	created := a.CreatedAt
	evs := []Event{{At: &created, Text: "Requested."}}
	if a.DecidedAt != nil {
		evs = append(evs, Event{At: a.DecidedAt, Text: "Approved (" + ApprovalCount(a) + ")."})
	}
	switch {
	case kind == approvals.BlockToolOff && !v.ToolSwitch.Enabled:
		evs = append(evs, Event{At: v.ToolSwitch.At, Text: "The tool " + a.Tool + " was switched off" + reasonSuffix(v.ToolSwitch.Reason) + "."})
	case kind == approvals.BlockTenantFrozen && v.Freeze.Frozen:
		evs = append(evs, Event{At: v.Freeze.At, Text: "The tenant " + v.TenantSlug + " was frozen" + reasonSuffix(v.Freeze.Reason) + "."})
	}
	// Known times first, in order; what has no time comes where it was
	// told (the block itself, found when the action came to run).
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].At == nil || evs[j].At == nil {
			return false
		}
		return evs[i].At.Before(*evs[j].At)
	})
	what := "its tool was switched off"
	if kind == approvals.BlockTenantFrozen {
		what = "its tenant was frozen"
	}
	evs = append(evs, Event{Text: "When it came to run, " + what + ", so Warden sent nothing to the provider. Nothing happened: there is nothing to check or undo at the provider."})
	switch {
	case v.BlockLifted():
		evs = append(evs, Event{Text: "The block is lifted now: it can run again under the same idempotency key."})
	case kind == approvals.BlockToolOff && v.ToolSwitch.Enabled:
		evs = append(evs, Event{Text: "The tool is on again, but the tenant is frozen."})
	case kind == approvals.BlockTenantFrozen && !v.Freeze.Frozen:
		evs = append(evs, Event{Text: "The tenant is unfrozen, but the tool " + a.Tool + " is switched off."})
	}
	return evs
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (reason: " + r + ")"
}

// ApproveWarning warns an approver, before approving, that the action
// cannot run now: its tool is switched off or its tenant frozen. Empty
// when it can.
func (v ApprovalView) ApproveWarning() string {
	if !v.CanDecide {
		return ""
	}
	switch {
	case !v.ToolSwitch.Enabled:
		return "The tool " + v.Action.Tool + " is switched off" + reasonSuffix(v.ToolSwitch.Reason) + ". If you approve, nothing is sent: execution is blocked until it is switched on again."
	case v.Freeze.Frozen:
		return "The tenant " + v.TenantSlug + " is frozen" + reasonSuffix(v.Freeze.Reason) + ". If you approve, nothing is sent: execution is blocked until it is unfrozen."
	}
	return ""
}

// approvalCrumbs are where the action page's breadcrumb may lead, in
// order of preference: the queue for approvers, else the traces the
// action came from, else the home page, which everyone opens.
var approvalCrumbs = []Link{{"Approvals", "/approvals"}, {"Traces", "/traces"}, {"Home", "/"}}

// Links sets what the action page links to from what the viewer of p may
// open, so that no link on it answers 403.
func (v ApprovalView) Links(p Page) ApprovalView {
	v.CanTrace = v.Action.JourneyID != "" && p.MayOpen("/traces/"+url.PathEscape(v.Action.JourneyID))
	v.CanAuditTrail = p.MayOpen("/audit/actions/" + url.PathEscape(v.Action.ID))
	v.Crumb = Link{}
	for _, c := range approvalCrumbs {
		if p.MayOpen(c.URL) {
			v.Crumb = c
			break
		}
	}
	return v
}
