package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/tools"
)

var testRedactor = redact.New(bytes.Repeat([]byte{9}, 32))

// Values planted in receipts and reasons.
const (
	plantedIBAN  = "DE89370400440532013000"
	plantedEmail = "mia.wong@example.net"
	stripeRefund = "re_3NqXz8L2eZvjdA1B0xYz1234" // random-looking, as provider ids are
)

func TestRedactReceipt(t *testing.T) {
	iban, email := testRedactor.Token("iban", plantedIBAN), testRedactor.Token("email", plantedEmail)
	tests := []struct {
		name, receipt, want string
	}{
		{"the simulator's refund receipt is unchanged",
			`{"refund_id":"rf_01jnq4z7c8m2x5v9w3k6h1t0ab","order_id":"ORD-1004","status":"refunded","amount_minor":240000,"currency":"USD","account_last4":"9182"}`,
			`{"refund_id":"rf_01jnq4z7c8m2x5v9w3k6h1t0ab","order_id":"ORD-1004","status":"refunded","amount_minor":240000,"currency":"USD","account_last4":"9182"}`},
		{"an IBAN and an e-mail address are redacted, ids kept",
			`{"refund_id":"rf_1","order_id":"ORD-1004","iban":"` + plantedIBAN + `","note":"sent to ` + plantedEmail + `"}`,
			`{"refund_id":"rf_1","order_id":"ORD-1004","iban":"` + iban + `","note":"sent to ` + email + `"}`},
		{"random-looking reference ids are kept, in the provider's order",
			`{"id":"` + stripeRefund + `","object":"refund","charge_id":"ch_3MmlLrLkdIwHu7ix0snN0B15","orderId":"pi_3MtwBwLkdIwHu7ix28a3tqPa"}`,
			`{"id":"` + stripeRefund + `","object":"refund","charge_id":"ch_3MmlLrLkdIwHu7ix0snN0B15","orderId":"pi_3MtwBwLkdIwHu7ix28a3tqPa"}`},
		{"personal data in an id field is redacted",
			`{"refund_id":"` + stripeRefund + `","account_id":"` + plantedIBAN + `","customer_id":"` + plantedEmail + `"}`,
			`{"refund_id":"` + stripeRefund + `","account_id":"` + iban + `","customer_id":"` + email + `"}`},
		{"an id field the redactor holds sensitive is redacted",
			`{"refund_id":"` + stripeRefund + `","session_id":"` + stripeRefund + `"}`,
			`{"refund_id":"` + stripeRefund + `","session_id":"` + testRedactor.Token("secret", stripeRefund) + `"}`},
		{"a random-looking value outside an id field is redacted",
			`{"refund_id":"rf_1","reference":"` + stripeRefund + `","paid":"` + stripeRefund + `"}`,
			`{"refund_id":"rf_1","reference":"` + testRedactor.Token("secret", stripeRefund) + `","paid":"` + testRedactor.Token("secret", stripeRefund) + `"}`},
		{"nested ids are redacted like any value: reversals read the top level",
			`{"refund":{"id":"` + stripeRefund + `"}}`,
			`{"refund":{"id":"` + testRedactor.Token("secret", stripeRefund) + `"}}`},
		{"an answer that is not JSON becomes a redacted JSON string",
			`refunded to ` + plantedIBAN,
			`"refunded to ` + iban + `"`},
		{"a JSON string answer is redacted", `"refunded to ` + plantedIBAN + `"`, `"refunded to ` + iban + `"`},
		{"null stays null", `null`, `null`},
		{"nothing stays nothing", ``, ``},
	}
	for _, tt := range tests {
		got := redactReceipt(testRedactor, json.RawMessage(tt.receipt))
		if string(got) != tt.want {
			t.Errorf("%s: redactReceipt(%s) = %s, want %s", tt.name, tt.receipt, got, tt.want)
		}
	}
}

func TestNamesID(t *testing.T) {
	for name, want := range map[string]bool{
		"id": true, "ID": true, "refund_id": true, "order-id": true, "charge.id": true, "refundId": true, "orderID": true,
		"paid": false, "uuid": false, "valid": false, "Id": true, "identity": false, "idempotency_key": false,
	} {
		if got := namesID(name); got != want {
			t.Errorf("namesID(%q) = %v, want %v", name, got, want)
		}
	}
}

// receiptProvider answers every call with one receipt, or refuses it with
// one reason; its Lookup finds the receipt once a call was made.
type receiptProvider struct {
	receipt string
	refusal string
	lose    bool // answer the first call with a transient error after "committing"

	mu    sync.Mutex
	calls int
}

func (p *receiptProvider) Execute(ctx context.Context, t tools.Tool, call tools.Call) (tools.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	switch {
	case p.refusal != "":
		return tools.Result{}, &tools.Error{Kind: tools.Terminal, Reason: p.refusal}
	case p.lose && p.calls == 1:
		return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "reply lost for " + plantedEmail}
	}
	return tools.Result{Output: json.RawMessage(p.receipt), Units: 1}, nil
}

func (p *receiptProvider) Lookup(ctx context.Context, t tools.Tool, key string) (tools.Result, tools.LookupStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == 0 {
		return tools.Result{}, tools.LookupNotFound, nil
	}
	return tools.Result{Output: json.RawMessage(p.receipt), Units: 1}, tools.LookupCommitted, nil
}

// storedText is every text the effects table holds of key.
func storedText(t *testing.T, f *fixture, key string) string {
	t.Helper()
	var receipt, why string
	if err := f.db.Read().QueryRow(`SELECT receipt, error FROM effects WHERE idempotency_key = ?`, key).Scan(&receipt, &why); err != nil {
		t.Fatal(err)
	}
	return receipt + "\n" + why
}

// TestStoredReceiptsAndReasonsAreRedacted: whatever way a provider's
// answer reaches the ledger — a receipt from Execute or from Reconcile's
// lookup, a refusal, a transient failure — the effects table holds it
// redacted with the bound redactor, and the reference ids a reversal
// needs as they were.
func TestStoredReceiptsAndReasonsAreRedacted(t *testing.T) {
	receipt := `{"refund_id":"` + stripeRefund + `","order_id":"ORD-1004","iban":"` + plantedIBAN + `","customer":"` + plantedEmail + `"}`
	iban, email := testRedactor.Token("iban", plantedIBAN), testRedactor.Token("email", plantedEmail)
	wantReceipt := `{"refund_id":"` + stripeRefund + `","order_id":"ORD-1004","iban":"` + iban + `","customer":"` + email + `"}`

	f := newFixture(t)
	SetRedactor(f.db, testRedactor)
	check := func(key string, e Entry, wantState State, wantReceipt, wantError string) {
		t.Helper()
		stored := f.get(key)
		if e.State != wantState || stored.State != wantState || string(stored.Receipt) != wantReceipt ||
			!bytes.Equal(e.Receipt, stored.Receipt) || stored.Error != wantError || e.Error != wantError {
			t.Errorf("%s: returned %s %s %q, stored %s %s %q; want %s %s %q", key, e.State, e.Receipt, e.Error,
				stored.State, stored.Receipt, stored.Error, wantState, wantReceipt, wantError)
		}
		if text := storedText(t, f, key); strings.Contains(text, plantedIBAN) || strings.Contains(text, plantedEmail) {
			t.Errorf("%s: stored in the clear: %s", key, text)
		}
	}

	// A receipt from Execute.
	f.mustIntend("wdn_receipt", refundArgs)
	e, err := Execute(f.ctx, f.db, &receiptProvider{receipt: receipt}, f.tool, f.call("wdn_receipt", refundArgs), digestOf(refundArgs))
	if err != nil {
		t.Fatal(err)
	}
	check("wdn_receipt", e, Recorded, wantReceipt, "")

	// A refusal.
	f.mustIntend("wdn_refused", refusedArgs)
	e, err = Execute(f.ctx, f.db, &receiptProvider{refusal: "account " + plantedIBAN + " is closed"}, f.tool, f.call("wdn_refused", refusedArgs), digestOf(refusedArgs))
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("refused Execute = %v, want ErrFailed", err)
	}
	check("wdn_refused", e, Failed, "", "account "+iban+" is closed")

	// A lost reply, then Reconcile's lookup.
	const lostArgs = `{"order_id":"ORD-1001","amount_minor":100,"currency":"USD","account":"7054"}`
	lost := &receiptProvider{receipt: receipt, lose: true}
	f.mustIntend("wdn_lost", lostArgs)
	e, err = Execute(f.ctx, f.db, lost, f.tool, f.call("wdn_lost", lostArgs), digestOf(lostArgs))
	if !tools.IsTransient(err) {
		t.Fatalf("Execute with the reply lost = %v, want transient", err)
	}
	check("wdn_lost", e, Reserved, "", "transient: reply lost for "+email)
	rep, err := Reconcile(f.ctx, f.db, f.resolver(lost, lostArgs), ReconcileOptions{Grace: -time.Hour})
	if err != nil || len(rep.Recorded) != 1 {
		t.Fatalf("Reconcile = %+v, %v; want wdn_lost recorded", rep, err)
	}
	check("wdn_lost", f.get("wdn_lost"), Recorded, wantReceipt, "")
}
