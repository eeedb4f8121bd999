package journeys

import (
	"context"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"

	"github.com/wardenhq/warden/approvals"
)

// settle charges the journey's cost, less what was charged elsewhere
// (precharged), against its reservation and releases the rest.
func settle(ctx context.Context, tx *store.Tx, j *Journey, precharged int64) error {
	return budgets.Settle(ctx, tx, j.TenantID, j.ReservedMicros, j.Cost.TotalMicros-precharged)
}

// createAction turns the journey's pending call into a pending action.
func (s *Service) createAction(ctx context.Context, tx *store.Tx, r *run, now time.Time) (approvals.Action, error) {
	p := r.pending
	red := r.redactor()
	shown := approvals.Show(red, catalog.ForApproval(p.tool), p.args, p.facts.Amount, p.facts.Target)
	target := shown.Target
	// Dual control first: it takes the target's lock, the first of the
	// transaction's locks (approvals.Required).
	req, err := approvals.Required(ctx, tx, r.j.TenantID, p.facts.Amount, target, now)
	if err != nil {
		return approvals.Action{}, err
	}
	spec := approvals.Spec{
		TenantID: r.j.TenantID, TenantSlug: r.j.TenantSlug, JourneyID: r.j.ID, StepN: p.n, KeyID: r.j.KeyID,
		KeyOwner: approvals.KeyOwner(r.req.Caller.Key.CreatedBy), Tool: catalog.ForApproval(p.tool), Args: p.args,
		ArgsRedacted: shown.Args, Summary: shown.Headline,
		Targets: shown.Targets, Reason: red.String(p.reason), Rule: p.rule,
		ApprovalsRequired: req.Approvals, ApprovalBasis: req.Basis, Target: target,
	}
	if a := p.facts.Amount; a != nil {
		spec.AmountMinor, spec.Currency, spec.Total = &a.Minor, a.Currency.Code, p.facts.Total
	}
	return approvals.Create(ctx, tx, s.o.Sealer, spec, now)
}
