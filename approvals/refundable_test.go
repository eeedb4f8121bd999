package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
)

// paidRefund is the refund tool as the catalog declares it: its amount
// argument is what the provider pays.
var paidRefund = Tool{Name: "issue_refund", Impact: refundTool.Impact, Reversibility: refundTool.Reversibility, ApprovalTTL: time.Hour, DeclaresAmount: true}

// propose creates an action of amount on target in a transaction of its
// own, as every door does, with the total its arguments declare (nil for
// none), and leaves it in status.
func (f fixture) propose(t *testing.T, db *store.DB, amount int64, currency string, target Target, total *money.Amount, status string) (Action, error) {
	t.Helper()
	var a Action
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		a, err = Create(context.Background(), tx, f.sealer, Spec{
			TenantID: f.tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprint("j-", targetSeq.Add(1)), KeyID: "k1", Tool: paidRefund,
			Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, targetSeq.Add(1))), ArgsRedacted: json.RawMessage(`{}`), Summary: "Refund",
			AmountMinor: &amount, Currency: currency, Rule: "high", Target: target, Total: total,
		}, time.Now())
		if err != nil || status == StatusPending {
			return err
		}
		_, err = tx.Exec(`UPDATE actions SET status = ? WHERE id = ?`, status, a.ID)
		a.Status = status
		return err
	})
	return a, err
}

// recordTotal keeps a lookup's answer for target, as a journey's lookup
// does.
func (f fixture) recordTotal(t *testing.T, target Target, total money.Amount) {
	t.Helper()
	err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		return RecordTotal(context.Background(), tx, f.tenant.ID, target, total, "lookup_order", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reverse records an executed reversal of a.
func (f fixture) reverse(t *testing.T, a Action, status string) {
	t.Helper()
	err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		r, err := Create(context.Background(), tx, f.sealer, Spec{
			TenantID: f.tenant.ID, TenantSlug: "acme", RequestedBy: "carol", Tool: Tool{Name: "reverse_refund", ApprovalTTL: time.Hour},
			Args: json.RawMessage(`{"refund_id":"rf_1"}`), ArgsRedacted: json.RawMessage(`{}`), Summary: "Reverse", AmountMinor: a.AmountMinor,
			Currency: a.Currency, Rule: "compensating", Compensates: a.ID, IdempotencyKey: "compensates:" + a.IdempotencyKey,
		}, time.Now())
		if err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE actions SET status = ? WHERE id = ?`, status, r.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestExceedsRefundable: a refund may ask for at most what is left of its
// order's total, once executed refunds (not reversed) and the ones still
// awaiting approval or running are taken; the total comes from a lookup
// or the call's own total argument, the smaller when both; without a
// total nothing is refused; and the approver's line says what was
// refunded.
func TestExceedsRefundable(t *testing.T) {
	usdTotal := func(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: money.MustCurrency("USD")} }
	tests := []struct {
		name     string
		lookup   *money.Amount // a lookup recorded the order's total
		earlier  []int64       // executed refunds of the order, in cents
		approved []int64       // approved ones, about to run
		pending  []int64       // pending ones
		reversed bool          // the first earlier refund's reversal executed
		declared *money.Amount // the call's own total argument
		ask      int64
		currency string
		wantErr  string // "" to be created
		wantLine string // Refundable's sentence for the new action, when created
	}{
		{name: "the demo: $2,400 again on a $2,400 order", lookup: usd(240_000), earlier: []int64{240_000}, ask: 240_000,
			wantErr: "ORD-1004 has $0.00 left to refund: $2,400.00 of $2,400.00 was already refunded. This asks for $2,400.00."},
		{name: "what is left fits", lookup: usd(240_000), earlier: []int64{100_000}, ask: 140_000,
			wantLine: "Already refunded $1,000.00 of $2,400.00 on ORD-1004."},
		{name: "a cent more than is left", lookup: usd(240_000), earlier: []int64{100_000}, ask: 140_001,
			wantErr: "ORD-1004 has $1,400.00 left to refund: $1,000.00 of $2,400.00 was already refunded. This asks for $1,400.01."},
		{name: "approved ones are taken", lookup: usd(240_000), earlier: []int64{100_000}, approved: []int64{100_000}, ask: 50_000,
			wantErr: "ORD-1004 has $400.00 left to refund: $1,000.00 of $2,400.00 was already refunded and $1,000.00 more is approved or running. This asks for $500.00."},
		{name: "pending ones are not taken, but shown to the approver", lookup: usd(240_000), earlier: []int64{100_000}, pending: []int64{100_000}, ask: 140_000,
			wantLine: "Already refunded $1,000.00 of $2,400.00 on ORD-1004. Other actions awaiting approval or running ask for $1,000.00 more."},
		{name: "a reversed refund gives its amount back", lookup: usd(240_000), earlier: []int64{240_000}, reversed: true, ask: 240_000,
			wantLine: "Already refunded $0.00 of $2,400.00 on ORD-1004."},
		{name: "the call's own total argument", declared: usd(240_000), earlier: []int64{200_000}, ask: 50_000,
			wantErr: "ORD-1004 has $400.00 left to refund"},
		{name: "the smaller of the lookup and the argument", lookup: usd(100_000), declared: usd(240_000), ask: 150_000,
			wantErr: "ORD-1004 has $1,000.00 left to refund: $0.00 of $1,000.00 was already refunded"},
		{name: "no total known: not weighed", earlier: []int64{240_000}, ask: 240_000,
			wantLine: "Already refunded $2,400.00 on ORD-1004. Its total is not known to Warden (no lookup recorded it), so what is left is not checked."},
		{name: "another currency than the order's", lookup: usd(240_000), ask: 100, currency: "EUR",
			wantErr: "ORD-1004 was paid in USD and this asks for €1.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			order := Target{Key: fmt.Sprintf("k-ord-%d", targetSeq.Add(1)), Label: "ORD-1004"}
			other := Target{Key: order.Key + "-other", Label: "ORD-1005"}
			if tt.lookup != nil {
				f.recordTotal(t, order, *tt.lookup)
				f.recordTotal(t, other, usdTotal(100))
			}
			// Finished actions and other targets never count.
			for _, s := range []string{StatusRejected, StatusFailed, StatusExpired, StatusCancelled} {
				if _, err := f.propose(t, f.db, 1, "USD", order, nil, s); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.propose(t, f.db, 100, "USD", other, nil, StatusExecuted); err != nil {
				t.Fatal(err)
			}
			for i, minor := range tt.earlier {
				a, err := f.propose(t, f.db, minor, "USD", order, nil, StatusExecuted)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && tt.reversed {
					f.reverse(t, a, StatusExecuted)
				}
			}
			for _, minor := range tt.approved {
				if _, err := f.propose(t, f.db, minor, "USD", order, nil, StatusApproved); err != nil {
					t.Fatal(err)
				}
			}
			for _, minor := range tt.pending {
				if _, err := f.propose(t, f.db, minor, "USD", order, nil, StatusPending); err != nil {
					t.Fatal(err)
				}
			}
			currency := tt.currency
			if currency == "" {
				currency = "USD"
			}
			a, err := f.propose(t, f.db, tt.ask, currency, order, tt.declared, StatusPending)
			if tt.wantErr != "" {
				p, ok := ExceedsRefundable(err)
				if !ok || !strings.Contains(p.Message, tt.wantErr) || p.Status() != 400 {
					t.Fatalf("Create = %v, want 400 %s %q", err, CodeExceedsRefundable, tt.wantErr)
				}
				if n := f.count(t, order, tt.ask); n != 0 {
					t.Errorf("%d actions of the refused amount were recorded, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create = %v, want it created", err)
			}
			r, ok, err := Refundable(context.Background(), f.db.Read(), a)
			if err != nil || !ok || r.Sentence() != tt.wantLine {
				t.Errorf("Refundable = %q, %v, %v; want %q", r.Sentence(), ok, err, tt.wantLine)
			}
		})
	}
}

// count is how many pending actions of amount are on target.
func (f fixture) count(t *testing.T, target Target, amount int64) int {
	t.Helper()
	var n int
	if err := f.db.Read().QueryRow(`SELECT COUNT(*) FROM actions WHERE target_key = ? AND amount_minor = ? AND status = ?`,
		target.Key, amount, StatusPending).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefundableNotWeighed: a reversal, an action without a target and
// one whose tool declares no amount are not weighed and show no line.
func TestRefundableNotWeighed(t *testing.T) {
	f := setup(t)
	order := Target{Key: "k-ord-nw", Label: "ORD-1"}
	f.recordTotal(t, order, *usd(100))
	a, err := f.propose(t, f.db, 100, "USD", order, nil, StatusExecuted)
	if err != nil {
		t.Fatal(err)
	}
	f.reverse(t, a, StatusPending)
	rev, err := ReversalOf(context.Background(), f.db.Read(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Refundable(context.Background(), f.db.Read(), rev); ok || err != nil {
		t.Errorf("Refundable(reversal) = %v, %v; want not weighed", ok, err)
	}
	free, err := f.propose(t, f.db, 1_000_000, "USD", Target{}, nil, StatusPending)
	if err != nil {
		t.Fatalf("an action without a target: %v, want it created", err)
	}
	if _, ok, err := Refundable(context.Background(), f.db.Read(), free); ok || err != nil {
		t.Errorf("Refundable(no target) = %v, %v; want not weighed", ok, err)
	}
	// An amount the agent merely states, on a tool that declares none, is
	// shown but not weighed: $10,000.00 "on" a $1.00 order is recorded.
	var stated Action
	err = f.db.Transact(context.Background(), func(tx *store.Tx) error {
		amount := int64(1_000_000)
		var err error
		stated, err = Create(context.Background(), tx, f.sealer, Spec{
			TenantID: f.tenant.ID, TenantSlug: "acme", KeyID: "k1", Tool: refundTool, Args: json.RawMessage(`{"n":"stated"}`),
			ArgsRedacted: json.RawMessage(`{}`), Summary: "Call", AmountMinor: &amount, Currency: "USD", Rule: "asked", Target: order,
		}, time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("a stated amount on a tool that declares none: %v, want it created", err)
	}
	if _, ok, err := Refundable(context.Background(), f.db.Read(), stated); ok || err != nil {
		t.Errorf("Refundable(stated amount) = %v, %v; want not weighed", ok, err)
	}
}

// Refunds of one order proposed at once, through two handles on one
// database as on two replicas, are all recorded — pending ones do not
// take what is left, approvers decide — but once approved and started at
// once only as many run as fit: of five $1,000 refunds of a $2,400 order,
// two start and three are refused with exceeds_refundable. On PostgreSQL
// (WARDEN_TEST_POSTGRES) the target's lock is what orders them; without
// it all five started.
func TestExceedsRefundableProposedAndStartedAtOnce(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other, err := store.OpenURL(ctx, f.url, store.Options{DataDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	dbs := []*store.DB{f.db, other}
	for round := range 3 {
		order := Target{Key: fmt.Sprintf("k-once-%d", targetSeq.Add(1)), Label: "ORD-1004"}
		f.recordTotal(t, order, *usd(240_000))
		const n = 5
		at := func(fn func(i int)) {
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { <-start; fn(i) })
			}
			close(start)
			wg.Wait()
		}
		ids := make([]string, n)
		at(func(i int) {
			a, err := f.propose(t, dbs[i%2], 100_000, "USD", order, nil, StatusPending)
			if err != nil {
				t.Errorf("round %d: proposal %d: %v, want it recorded", round, i, err)
			}
			ids[i] = a.ID
		})
		if t.Failed() {
			t.FailNow()
		}
		if err := f.db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(`UPDATE actions SET status = ? WHERE target_key = ?`, StatusApproved, order.Key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, n)
		started := make([]bool, n)
		at(func(i int) { started[i], errs[i] = StartExecuting(ctx, dbs[i%2], ids[i], time.Now()) })
		var ran, refused int
		for i := range n {
			_, isRefusal := ExceedsRefundable(errs[i])
			switch {
			case started[i] && errs[i] == nil:
				ran++
			case isRefusal:
				refused++
			default:
				t.Fatalf("round %d: StartExecuting = %v, %v", round, started[i], errs[i])
			}
		}
		if ran != 2 || refused != 3 {
			t.Fatalf("round %d: %d of %d approved $1,000.00 refunds of a $2,400.00 order started and %d refused, want 2 and 3", round, ran, n, refused)
		}
	}
}

// Approved refunds that together exceed the order's total — approved
// before its total was known — run only as far as it goes: started at
// once, through two handles, one moves to executing and the other is
// refused with exceeds_refundable and stays approved.
func TestExceedsRefundableAtExecution(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other, err := store.OpenURL(ctx, f.url, store.Options{DataDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	for round := range 4 {
		order := Target{Key: fmt.Sprintf("k-exec-%d", targetSeq.Add(1)), Label: "ORD-1004"}
		var ids []string
		for range 2 {
			a, err := f.propose(t, f.db, 150_000, "USD", order, nil, StatusApproved)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		f.recordTotal(t, order, *usd(240_000))
		start := make(chan struct{})
		var wg sync.WaitGroup
		started := make([]bool, 2)
		errs := make([]error, 2)
		for i, id := range ids {
			db := []*store.DB{f.db, other}[i]
			wg.Go(func() {
				<-start
				started[i], errs[i] = StartExecuting(ctx, db, id, time.Now())
			})
		}
		close(start)
		wg.Wait()
		var ran, refused int
		for i := range ids {
			_, isRefusal := ExceedsRefundable(errs[i])
			switch {
			case started[i] && errs[i] == nil:
				ran++
			case isRefusal:
				refused++
				a, err := Get(ctx, f.db.Read(), ids[i])
				if err != nil || a.Status != StatusApproved {
					t.Errorf("round %d: the refused action is %s (%v), want it still approved", round, a.Status, err)
				}
			default:
				t.Fatalf("round %d: StartExecuting = %v, %v", round, started[i], errs[i])
			}
		}
		if ran != 1 || refused != 1 {
			t.Fatalf("round %d: %d started and %d refused, want 1 and 1", round, ran, refused)
		}
	}
}
