package execution

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// RetryRoles may retry an action whose execution was blocked: on-call and
// admins. The route table uses it too.
var RetryRoles = []string{identity.RoleOncall, identity.RoleAdmin}

// Refusals of a retry from the action page.
var (
	ErrCannotRetry  = problem.Forbidden("cannot_retry", "Retrying an execution needs the on-call or admin role for the action's tenant.")
	ErrNotRetryable = problem.Conflict("not_retryable", "Only an action whose execution was blocked before anything was sent can be retried here.").Titled("This action cannot be retried")
	ErrStillBlocked = problem.Conflict("still_blocked", "The block is not lifted yet: switch the tool on or unfreeze the tenant first, then retry.").Titled("Execution is still blocked")
	ErrNotRetried   = problem.Conflict("not_retried", "Warden cannot be sure nothing reached the provider, so it did not retry: reconciliation decides, under the same idempotency key.").Titled("Not retried")
)

// RetryAction executes again one action whose execution was blocked
// before anything was sent (its tool was switched off or its tenant
// frozen, approvals.BlockOf), once the block is lifted: under the same
// idempotency key, with its action.retried event by p, in one transaction
// (RetryFailed's rules: only when the ledger shows no attempt).
func (s *Service) RetryAction(ctx context.Context, p identity.Principal, actionID string) (approvals.Action, error) {
	var a approvals.Action
	err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = approvals.Get(ctx, tx, actionID); err != nil {
			return err
		}
		t, err := tenants.ByID(ctx, tx, a.TenantID)
		if err != nil {
			return err
		}
		if !p.HasAnyRole(RetryRoles...) || !p.InTenant(t.Slug) {
			return ErrCannotRetry
		}
		if approvals.BlockOf(a) == "" {
			return ErrNotRetryable
		}
		tool, err := s.tool(ctx, tx, a.Tool)
		if err != nil {
			return fmt.Errorf("tool %s: %w", a.Tool, err)
		}
		if !tool.Enabled || t.Frozen {
			return ErrStillBlocked
		}
		var rep RetryReport
		actor := audit.Actor{Type: audit.ActorPrincipal, ID: p.ID}
		if err := s.retryOne(ctx, tx, a, tool, t.Slug, "page:"+store.NewID(), actor, "retried from the action page after the block was lifted", &rep); err != nil {
			return err
		}
		if len(rep.Retried) != 1 {
			return ErrNotRetried
		}
		a.Status = approvals.StatusApproved
		return nil
	})
	if err == nil {
		s.notify()
	}
	return a, err
}
