package journeys

import (
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/money"
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
		return r.db.Transact(r.ctx, func(tx *sql.Tx) error {
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

// The headline is Warden's sentence from the call: the three tools with
// sentences of their own, and "Call TOOL on TARGET for AMOUNT" without
// the parts a call lacks for any other (issue 21, finding 6). Nothing the
// agent says reaches it.
func TestSummaryIsWrittenFromTheCall(t *testing.T) {
	usd := &money.Amount{Minor: 124_900, Currency: money.MustCurrency("USD")}
	tests := []struct {
		tool   string
		args   string
		amount *money.Amount
		target string
		want   string
	}{
		{"issue_refund", `{"order_id":"ORD-1008","account":"GB74BUKB20201555559182"}`, usd, "ORD-1008", "Refund $1,249.00 to account ••9182 for order ORD-1008"},
		{"send_payout", `{"payee":"acct-77"}`, usd, "acct-77", "Call send_payout on acct-77 for $1,249.00"},
		{"lookup_order", `{"order_id":"ORD-1003"}`, nil, "", "Call lookup_order"},
		{"lookup_order", `{"order_id":"ORD-1003"}`, &money.Amount{Minor: 100, Currency: money.MustCurrency("USD")}, "", "Call lookup_order for $1.00"},
		{"close_ticket", `{"ticket":"T-1"}`, nil, "T-1", "Call close_ticket on T-1"},
	}
	for _, tt := range tests {
		if got := Summary(tt.tool, json.RawMessage(tt.args), tt.amount, tt.target); got != tt.want {
			t.Errorf("Summary(%s, %s) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}
