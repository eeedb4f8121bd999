package execution

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/risk"
)

// A proposal that loses the insert race on its Idempotency-Key returns the
// winner's action: the lost race is recognised by the database's unique
// violation on actions.idempotency_key on either engine (it matched only
// SQLite's message, so on PostgreSQL a concurrent retry got a 500), and
// by nothing else.
func TestIsDuplicateKeyOnTheEngine(t *testing.T) {
	r := newRig(t)
	create := func(key, id string) error {
		return r.db.Transact(r.ctx, func(tx *store.Tx) error {
			_, err := approvals.Create(r.ctx, tx, r.sealer, approvals.Spec{TenantID: r.tenant.ID, TenantSlug: r.tenant.Slug, KeyID: r.caller.Key.ID,
				Tool: approvals.Tool{Name: "issue_refund", Impact: risk.ImpactHigh, ApprovalTTL: time.Hour},
				Args: json.RawMessage(`{"order_id":"` + id + `"}`), ArgsRedacted: json.RawMessage(`{}`), Summary: "refund", Rule: "test",
				IdempotencyKey: key, ApprovalsRequired: 1}, r.clock())
			return err
		})
	}
	if err := create("ext_same", "ORD-1"); err != nil {
		t.Fatal(err)
	}
	err := create("ext_same", "ORD-2")
	if err == nil {
		t.Fatal("a second action with the same idempotency key was created")
	}
	if !isDuplicateKey(err) {
		t.Errorf("isDuplicateKey(%v) = false, want true", err)
	}
	if isDuplicateKey(errors.New("database is locked")) || isDuplicateKey(nil) {
		t.Error("isDuplicateKey is true for an error that is not a duplicate key")
	}
}
