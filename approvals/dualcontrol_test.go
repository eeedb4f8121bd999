package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

var targetSeq atomic.Int64

func usd(minor int64) *money.Amount {
	return &money.Amount{Minor: minor, Currency: money.MustCurrency("USD")}
}

// onTarget records a live action of amount on target, created at.
func (f fixture) onTarget(t *testing.T, amount *money.Amount, target Target, status string, at time.Time) {
	t.Helper()
	err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		a, err := Create(context.Background(), tx, f.sealer, Spec{
			TenantID: f.tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprint("j-", targetSeq.Add(1)), KeyID: "k1", Tool: refundTool,
			Args: json.RawMessage(`{}`), ArgsRedacted: json.RawMessage(`{}`), Summary: "Refund", AmountMinor: &amount.Minor,
			Currency: amount.Currency.Code, Rule: "high", Target: target,
		}, at)
		if err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE actions SET status = ? WHERE id = ?`, status, a.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// required runs Required in a transaction of its own, as its callers do.
func (f fixture) required(t *testing.T, amount *money.Amount, target Target, now time.Time) (Requirement, error) {
	t.Helper()
	var req Requirement
	err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		req, err = Required(context.Background(), tx, f.tenant.ID, amount, target, now)
		return err
	})
	return req, err
}

func TestRequired(t *testing.T) {
	now := time.Now().UTC()
	order := Target{Key: "k-ord-1004", Label: "ORD-1004"}
	other := Target{Key: "k-ord-1005", Label: "ORD-1005"}
	kwd := &money.Amount{Minor: 1000, Currency: money.MustCurrency("KWD")}
	tests := []struct {
		name      string
		earlier   []func(t *testing.T, f fixture)
		amount    *money.Amount
		target    Target
		want      int
		wantBasis string
	}{
		{"no amount", nil, nil, order, 1, ""},
		{"below the threshold", nil, usd(99_999), order, 1, ""},
		{"at the threshold", nil, usd(100_000), order, 2, "$1,000.00 reaches the dual-control threshold of $1,000.00."},
		{"no threshold in the currency", nil, kwd, order, 2, "No dual-control threshold is set for KWD"},
		{"split on one target", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) { f.onTarget(t, usd(80_000), order, StatusExecuted, now.Add(-time.Hour)) },
		}, usd(80_000), order, 2, "Cumulative $1,600.00 for ORD-1004 over 24 h (this $800.00 and $800.00 earlier)"},
		{"pending ones count", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) { f.onTarget(t, usd(50_000), order, StatusPending, now.Add(-time.Minute)) },
		}, usd(50_000), order, 2, "Cumulative $1,000.00"},
		{"another target does not", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) { f.onTarget(t, usd(80_000), other, StatusExecuted, now.Add(-time.Hour)) },
		}, usd(80_000), order, 1, ""},
		{"finished ones do not", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) { f.onTarget(t, usd(80_000), order, StatusRejected, now.Add(-time.Hour)) },
			func(t *testing.T, f fixture) { f.onTarget(t, usd(80_000), order, StatusExpired, now.Add(-time.Hour)) },
			func(t *testing.T, f fixture) { f.onTarget(t, usd(80_000), order, StatusCancelled, now.Add(-time.Hour)) },
			func(t *testing.T, f fixture) { f.onTarget(t, usd(80_000), order, StatusFailed, now.Add(-time.Hour)) },
		}, usd(80_000), order, 1, ""},
		{"outside the window does not", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) {
				f.onTarget(t, usd(80_000), order, StatusExecuted, now.Add(-25*time.Hour))
			},
		}, usd(80_000), order, 1, ""},
		{"another currency on the target needs two", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) {
				f.onTarget(t, &money.Amount{Minor: 80_000, Currency: money.MustCurrency("EUR")}, order, StatusExecuted, now.Add(-time.Hour))
			},
		}, usd(10), order, 2, "ORD-1004 already has live actions in EUR within 24 h"},
		{"another currency elsewhere does not", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) {
				f.onTarget(t, &money.Amount{Minor: 80_000, Currency: money.MustCurrency("EUR")}, other, StatusExecuted, now.Add(-time.Hour))
			},
		}, usd(80_000), order, 1, ""},
		{"no target, no sum", []func(t *testing.T, f fixture){
			func(t *testing.T, f fixture) {
				f.onTarget(t, usd(80_000), Target{}, StatusExecuted, now.Add(-time.Hour))
			},
		}, usd(80_000), Target{}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			for _, add := range tt.earlier {
				add(t, f)
			}
			got, err := f.required(t, tt.amount, tt.target, now)
			if err != nil {
				t.Fatal(err)
			}
			if got.Approvals != tt.want || !strings.Contains(got.Basis, tt.wantBasis) || (tt.wantBasis == "" && got.Basis != "") {
				t.Errorf("Required = %d %q, want %d %q", got.Approvals, got.Basis, tt.want, tt.wantBasis)
			}
		})
	}
}

func TestRequiredThresholdOffAndWindow(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	now := time.Now().UTC()
	order := Target{Key: "k", Label: "ORD-1"}
	f.onTarget(t, usd(80_000), order, StatusExecuted, now.Add(-30*time.Hour))
	err := f.db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tenants.SetDualControlWindowTx(ctx, tx, f.tenant.ID, 48*time.Hour); err != nil {
			return err
		}
		_, err := tenants.SetThresholdTx(ctx, tx, f.tenant.ID, tenants.Threshold{Currency: "EUR", Minor: 0})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.required(t, usd(80_000), order, now)
	if err != nil || got.Approvals != 2 || !strings.Contains(got.Basis, "over 2 days") {
		t.Errorf("with a 48 h window Required = %+v, %v; want 2 approvers over 2 days", got, err)
	}
	eur := &money.Amount{Minor: 99_000_000, Currency: money.MustCurrency("EUR")}
	if got, err := f.required(t, eur, order, now); err != nil || got.Approvals != 1 {
		t.Errorf("EUR threshold 0 (off): Required = %+v, %v; want 1", got, err)
	}
}

// Split refunds proposed at the same moment, through two handles on one
// database as on two replicas, are counted one after the other: exactly
// the ones the sequential rule lets through get one approver. On
// PostgreSQL (WARDEN_TEST_POSTGRES) each transaction once read the
// target's total before the others inserted, and all of them got one.
func TestSplitActionsCreatedAtOnceAreCountedInTurn(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	other, err := store.OpenURL(ctx, f.url, store.Options{DataDir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tests := []struct {
		name    string
		amount  int64 // of each of n, against the default threshold of $1,000.00
		n       int
		wantOne int // how many need one approver when counted in turn
	}{
		{"three $416 of a $1,249 order", 41_600, 3, 2},
		{"three $800", 80_000, 3, 1},
		{"six $300", 30_000, 6, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := range 4 {
				target := Target{Key: fmt.Sprintf("k-split-%d", targetSeq.Add(1)), Label: "ORD-1249"}
				start := make(chan struct{})
				var wg sync.WaitGroup
				got := make([]Action, tt.n)
				for i := range tt.n {
					db := []*store.DB{f.db, other}[i%2]
					wg.Go(func() {
						<-start
						err := db.Transact(ctx, func(tx *store.Tx) error {
							req, err := Required(ctx, tx, f.tenant.ID, usd(tt.amount), target, time.Now())
							if err != nil {
								return err
							}
							got[i], err = Create(ctx, tx, f.sealer, Spec{
								TenantID: f.tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprint("j-", targetSeq.Add(1)), KeyID: "k1", Tool: refundTool,
								Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), ArgsRedacted: json.RawMessage(`{}`), Summary: "Refund",
								AmountMinor: &tt.amount, Currency: "USD", Rule: "high", Target: target,
								ApprovalsRequired: req.Approvals, ApprovalBasis: req.Basis,
							}, time.Now())
							return err
						})
						if err != nil {
							t.Error(err)
						}
					})
				}
				close(start)
				wg.Wait()
				one := 0
				for _, a := range got {
					switch {
					case a.ApprovalsRequired == 1:
						one++
					case !strings.Contains(a.ApprovalBasis, "Cumulative"):
						t.Errorf("round %d: %s needs %d approvers because %q, want the cumulative rule", round, a.ID, a.ApprovalsRequired, a.ApprovalBasis)
					}
				}
				if one != tt.wantOne {
					t.Fatalf("round %d: %d of %d actions of %s on one target need one approver, want %d (the sequential rule)",
						round, one, tt.n, money.Format(*usd(tt.amount)), tt.wantOne)
				}
			}
		})
	}
}
