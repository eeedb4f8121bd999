package approvals

import (
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
)

// Refusals of a decision. Each says why in words an approver understands.
var (
	ErrNotApprover     = problem.Forbidden("not_approver", "Only approvers decide actions.")
	ErrOutOfScope      = problem.Forbidden("out_of_scope", "This action's tenant is outside your scope.")
	ErrOwnRequest      = problem.Forbidden("own_request", "You requested this action, so someone else must decide it.")
	ErrOwnKey          = problem.Forbidden("own_key", "An agent asked for this action with a key you created, so someone else must decide it.")
	ErrAlreadyApproved = problem.Conflict("already_approved", "You have already approved this action; a second approver must decide.").Titled("You have already approved this action")
	ErrExpired         = problem.Conflict("expired", "This action expired before it was decided.").Titled("This action can no longer be decided")
	ErrAlreadyDecided  = problem.Conflict("already_decided", "This action was already decided.").Titled("This action can no longer be decided")
	ErrStale           = problem.Conflict("stale", "Its payload is no longer the one you reviewed. Reload it and review it again.").Titled("The action changed since you opened it")
	ErrReasonRequired  = problem.Unprocessable("reason_required", "A rejection needs a reason: say why, for the agent's owner and the audit trail.")
	ErrCommentTooLong  = problem.Unprocessable("comment_too_long", fmt.Sprintf("Keep the comment under %d characters.", MaxCommentLen))
)

// MaxCommentLen is the longest comment a decision keeps.
const MaxCommentLen = 2000

// Decision kinds.
const (
	Approve = "approve"
	Reject  = "reject"
)

// Check applies the approval policy to one principal deciding one action.
// tenantSlug is the action's tenant; approvedBy lists the principals who
// already approved it (Approvers). A principal who already approved, or
// whose e-mail is an earlier approver's (the same person signed in
// through another issuer, ErrSameEmail), is not a second approver. It is
// pure: the caller loads, Check decides.
func Check(p identity.Principal, a Action, tenantSlug string, approvedBy []Approver, digest string, now time.Time) error {
	return CheckDecider(identity.RoleApprover, ErrNotApprover, p, a, tenantSlug, approvedBy, digest, now)
}

// CheckDecider is Check for deciders who hold role (refused with notRole
// otherwise): the rules of four eyes — not the requester, not twice, not
// after expiry, only on the exact payload reviewed — are the same
// whoever decides. Governed control-plane changes (package changes) are
// decided by admins through it.
func CheckDecider(role string, notRole error, p identity.Principal, a Action, tenantSlug string, approvedBy []Approver, digest string, now time.Time) error {
	switch {
	case !p.HasRole(role):
		return notRole
	case !p.InTenant(tenantSlug):
		return ErrOutOfScope
	case a.RequestedBy != "" && a.RequestedBy == p.ID:
		return ErrOwnRequest
	case a.KeyOwner != "" && a.KeyOwner == p.ID:
		return ErrOwnKey
	case a.Status == StatusExpired, a.Status == StatusPending && !now.Before(a.ExpiresAt):
		return ErrExpired
	case a.Status != StatusPending:
		return ErrAlreadyDecided
	case digest != a.PayloadDigest:
		return ErrStale
	}
	for _, earlier := range approvedBy {
		if earlier.ID == p.ID {
			return ErrAlreadyApproved
		}
	}
	for _, earlier := range approvedBy {
		if sameAddress(earlier.Email, p.Email) {
			return sameEmail(p, earlier)
		}
	}
	return nil
}

// ReverseRoles may ask for the reversal of an executed action: approvers,
// and on-call engineers following a runbook. The route table and MayReverse
// both use it.
var ReverseRoles = []string{identity.RoleApprover, identity.RoleOncall}

// Refusals of a reversal.
var (
	ErrNotReversible = problem.Conflict("not_reversible", "Only an executed, compensatable action can be reversed.")
	ErrCannotReverse = problem.Forbidden("cannot_reverse", "Reversing an action needs the approver or on-call role for its tenant.")
)

// MayReverse applies the reversal policy to one principal and one action
// of tenant tenantSlug: the principal holds a ReverseRoles role in the
// action's tenant, and the action executed and has a compensating tool. It
// is pure, like Check; whether a live reversal already exists is the
// caller's question (pressing Reverse again opens that one).
func MayReverse(p identity.Principal, a Action, tenantSlug string) error {
	switch {
	case !p.HasAnyRole(ReverseRoles...) || !p.InTenant(tenantSlug):
		return ErrCannotReverse
	case a.Status != StatusExecuted || a.Reversibility != risk.Compensatable:
		return ErrNotReversible
	}
	return nil
}
