package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/risk"
)

// A runbook's approval request ("runbook:" tool) is not a catalog call:
// its final decision goes to the registered operational executor, in the
// decision's transaction, and no ledger record or execution job is made.
func TestOperationalActionsGoToTheirExecutor(t *testing.T) {
	r := newRig(t)
	var seen []string
	r.ex.SetOperational(func(_ context.Context, _ *store.Tx, a approvals.Action) error {
		seen = append(seen, a.Status)
		return nil
	})
	create := func(n int) approvals.Action {
		var a approvals.Action
		if err := r.db.Transact(r.ctx, func(tx *store.Tx) (err error) {
			a, err = approvals.Create(r.ctx, tx, r.sealer, approvals.Spec{TenantID: r.tenant.ID, TenantSlug: r.tenant.Slug, RequestedBy: oncall.ID,
				Tool: approvals.Tool{Name: OperationalPrefix + "purge_traces", Impact: risk.ImpactHigh, ApprovalTTL: time.Hour},
				Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), ArgsRedacted: json.RawMessage(`{}`), Summary: "purge", Rule: "runbook", ApprovalsRequired: 1}, r.clock())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a
	}
	approved := create(1)
	create(2) // left to expire
	if err := r.decide(approver, approved.ID, approvals.Approve); err != nil {
		t.Fatal(err)
	}
	r.advance(2 * time.Hour)
	if n, err := r.ex.ExpireActions(r.ctx); err != nil || n != 1 {
		t.Fatalf("ExpireActions = %d, %v; want 1", n, err)
	}
	if want := []string{approvals.StatusApproved, approvals.StatusExpired}; !slices.Equal(seen, want) {
		t.Errorf("executor saw %v, want %v", seen, want)
	}
	var ledger, jobs int
	for _, k := range r.jobKeys() {
		if !strings.HasPrefix(k, "expire:") { // each pending action has its expiry job
			jobs++
		}
	}
	if err := r.db.Read().QueryRow(`SELECT COUNT(*) FROM effects`).Scan(&ledger); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 || ledger != 0 {
		t.Errorf("jobs = %d, ledger records = %d; want none", jobs, ledger)
	}
}
