package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/tools"
)

func openTemp(t testing.TB) *Provider {
	t.Helper()
	p, err := Open(context.Background(), filepath.Join(t.TempDir(), "sim.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// tool returns the catalog entry called name.
func tool(t testing.TB, name string) tools.Tool {
	t.Helper()
	for _, tl := range Catalog() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s in the catalog", name)
	return tools.Tool{}
}

func exec(t testing.TB, p *Provider, name, key, args string) (tools.Result, error) {
	t.Helper()
	return p.Execute(context.Background(), tool(t, name),
		tools.Call{Tool: name, Args: json.RawMessage(args), IdempotencyKey: key, Tenant: "acme"})
}

// mustExec executes and decodes the answer into out.
func mustExec(t testing.TB, p *Provider, name, key, args string, out any) tools.Result {
	t.Helper()
	res, err := exec(t, p, name, key, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	if res.Units != 1 {
		t.Errorf("%s: Units = %d, want 1", name, res.Units)
	}
	if err := json.Unmarshal(res.Output, out); err != nil {
		t.Fatalf("%s answer %s: %v", name, res.Output, err)
	}
	return res
}

func kindOf(err error) tools.ErrorKind {
	var pe *tools.Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	if err != nil {
		return "unclassified"
	}
	return ""
}

func effectCount(t testing.TB, p *Provider, name string) int {
	t.Helper()
	n, err := p.EffectCount(context.Background(), name)
	if err != nil {
		t.Fatalf("EffectCount: %v", err)
	}
	return n
}

func demoOrder(t testing.TB, id string) Order {
	t.Helper()
	for _, o := range DemoOrders() {
		if o.ID == id {
			return o
		}
	}
	t.Fatalf("no demo order %s", id)
	return Order{}
}

const refundArgs = `{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"GB74BUKB20201555559182"}`

func TestLookupOrder(t *testing.T) {
	p := openTemp(t)
	for _, want := range DemoOrders() {
		var got Order
		mustExec(t, p, ToolLookupOrder, "", fmt.Sprintf(`{"order_id":%q}`, want.ID), &got)
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("lookup_order %s = %s, want %s", want.ID, gotJSON, wantJSON)
		}
	}
	// The answer carries what the approval demo shows.
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.AmountMinor != 240000 || o.Currency != "USD" || o.AccountLast4 != "9182" || o.Account != "GB74BUKB20201555559182" ||
		o.CustomerEmail != "daniel.whitaker@example.com" || o.Status != StatusDelivered || len(o.Items) != 2 {
		t.Errorf("lookup_order ORD-1004 = %+v", o)
	}
	if n := effectCount(t, p, ""); n != 0 {
		t.Errorf("reads recorded %d effects, want 0", n)
	}
}

func TestReadsAreDeterministic(t *testing.T) {
	p := openTemp(t)
	for _, name := range []string{ToolLookupOrder, ToolCheckChangeWindow} {
		a, err1 := exec(t, p, name, "", `{"order_id":"ORD-1002"}`)
		b, err2 := exec(t, p, name, "", `{"order_id":"ORD-1002"}`)
		if err1 != nil || err2 != nil || string(a.Output) != string(b.Output) {
			t.Errorf("%s answered %s then %s (%v, %v), want the same twice", name, a.Output, b.Output, err1, err2)
		}
	}
}

func TestCheckChangeWindow(t *testing.T) {
	p := openTemp(t)
	for _, o := range DemoOrders() {
		var got ChangeWindow
		mustExec(t, p, ToolCheckChangeWindow, "", fmt.Sprintf(`{"order_id":%q}`, o.ID), &got)
		wantOpen := o.Status == StatusPlaced || o.Status == StatusPacked
		if got.OrderID != o.ID || got.Open != wantOpen || !got.ClosesAt.Equal(o.PlacedAt.Add(48*time.Hour)) {
			t.Errorf("check_change_window %s (%s) = %+v, want open %v closing %v", o.ID, o.Status, got, wantOpen, o.PlacedAt.Add(48*time.Hour))
		}
	}
}

func TestSubmitChangeRequest(t *testing.T) {
	p := openTemp(t)
	var got ChangeReceipt
	mustExec(t, p, ToolSubmitChangeRequest, "chg-1", `{"order_id":"ORD-1001","change":"Deliver to the side door."}`, &got)
	if !strings.HasPrefix(got.ChangeID, "chg_") || got.OrderID != "ORD-1001" || got.Status != "submitted" {
		t.Errorf("submit_change_request = %+v", got)
	}
	// ORD-1003 has shipped: its window is closed.
	_, err := exec(t, p, ToolSubmitChangeRequest, "chg-2", `{"order_id":"ORD-1003","change":"Deliver to the side door."}`)
	if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "closed") {
		t.Errorf("change to a shipped order: err = %v, want terminal, window closed", err)
	}
	if n := effectCount(t, p, ToolSubmitChangeRequest); n != 1 {
		t.Errorf("EffectCount = %d, want 1", n)
	}
}

func TestIssueRefund(t *testing.T) {
	p := openTemp(t)
	var got RefundReceipt
	mustExec(t, p, ToolIssueRefund, "rf-1", refundArgs, &got)
	if !strings.HasPrefix(got.RefundID, "rf_") || got.OrderID != "ORD-1004" || got.Status != "refunded" ||
		got.AmountMinor != 240000 || got.Currency != "USD" || got.AccountLast4 != "9182" {
		t.Errorf("issue_refund = %+v", got)
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 240000 {
		t.Errorf("refunded_minor = %d after the refund, want 240000", o.RefundedMinor)
	}

	// The account may be named by its last four characters, or spaced.
	mustExec(t, p, ToolIssueRefund, "rf-2", `{"order_id":"ORD-1001","amount_minor":500,"currency":"USD","account":"7054"}`, &got)
	mustExec(t, p, ToolIssueRefund, "rf-3", `{"order_id":"ORD-1001","amount_minor":500,"currency":"USD","account":"gb86 nwbk 6016 1331 9270 54"}`, &got)
	if n := effectCount(t, p, ToolIssueRefund); n != 3 {
		t.Errorf("EffectCount = %d, want 3", n)
	}
}

func TestIssueRefundRefusals(t *testing.T) {
	tests := []struct {
		name, args, wantReason string
	}{
		{"unknown order", `{"order_id":"ORD-9999","amount_minor":100,"currency":"USD","account":"9182"}`, "unknown order ORD-9999"},
		{"above the order amount", `{"order_id":"ORD-1004","amount_minor":240001,"currency":"USD","account":"9182"}`, "a refund of $2,400.01 is more than the $2,400.00 paid for order ORD-1004"},
		{"zero amount", `{"order_id":"ORD-1004","amount_minor":0,"currency":"USD","account":"9182"}`, `"amount_minor" must be a positive number`},
		{"negative amount", `{"order_id":"ORD-1004","amount_minor":-5,"currency":"USD","account":"9182"}`, `"amount_minor" must be a positive number`},
		{"fractional amount", `{"order_id":"ORD-1004","amount_minor":10.5,"currency":"USD","account":"9182"}`, `"amount_minor" must be a whole number`},
		{"amount as a string", `{"order_id":"ORD-1004","amount_minor":"100","currency":"USD","account":"9182"}`, `"amount_minor" must be a whole number`},
		{"other currency", `{"order_id":"ORD-1004","amount_minor":100,"currency":"EUR","account":"9182"}`, "paid in USD"},
		{"lower-case currency", `{"order_id":"ORD-1004","amount_minor":100,"currency":"usd","account":"9182"}`, "ISO 4217"},
		{"someone else's account", `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"GB86NWBK60161331927054"}`, "payment account"},
		{"no account", `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD"}`, "account"},
		{"no order", `{"amount_minor":100,"currency":"USD","account":"9182"}`, "order_id"},
		{"unknown field", `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182","note":"x"}`, `"note" is not an argument of issue_refund`},
		{"not an object", `[1]`, "invalid arguments: they must be a JSON object"},
		{"trailing data", `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182"} {}`, "data after"},
		{"trailing brace", `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182"}}`, "data after"},
	}
	p := openTemp(t)
	for i, tt := range tests {
		_, err := exec(t, p, ToolIssueRefund, fmt.Sprintf("bad-%d", i), tt.args)
		if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), tt.wantReason) {
			t.Errorf("%s: err = %v, want terminal mentioning %q", tt.name, err, tt.wantReason)
		}
	}
	_, err := exec(t, p, ToolIssueRefund, "", refundArgs)
	if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "idempotency key") {
		t.Errorf("no idempotency key: err = %v, want terminal", err)
	}
	if n := effectCount(t, p, ""); n != 0 {
		t.Errorf("refused refunds left %d effects, want 0", n)
	}
}

func TestUnknownOrderIsTerminalForEveryTool(t *testing.T) {
	p := openTemp(t)
	for name, args := range map[string]string{
		ToolLookupOrder:         `{"order_id":"ORD-0000"}`,
		ToolCheckChangeWindow:   `{"order_id":"ORD-0000"}`,
		ToolSubmitChangeRequest: `{"order_id":"ORD-0000","change":"x"}`,
		ToolIssueRefund:         `{"order_id":"ORD-0000","amount_minor":1,"currency":"USD","account":"9182"}`,
		ToolSendCustomerEmail:   `{"order_id":"ORD-0000","to":"a@example.com","subject":"s","body":"b"}`,
	} {
		_, err := exec(t, p, name, "k-"+name, args)
		if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "unknown order ORD-0000") {
			t.Errorf("%s: err = %v, want terminal, unknown order", name, err)
		}
	}
	_, err := p.Execute(context.Background(), tools.Tool{Name: "wire_money"}, tools.Call{Args: json.RawMessage(`{}`), IdempotencyKey: "k"})
	if kindOf(err) != tools.Terminal {
		t.Errorf("unknown tool: err = %v, want terminal", err)
	}
}

func TestReverseRefund(t *testing.T) {
	p := openTemp(t)
	var refund RefundReceipt
	mustExec(t, p, ToolIssueRefund, "rf-1", refundArgs, &refund)
	var rev ReversalReceipt
	mustExec(t, p, ToolReverseRefund, "rv-1", fmt.Sprintf(`{"refund_id":%q}`, refund.RefundID), &rev)
	if !strings.HasPrefix(rev.ReversalID, "rv_") || rev.RefundID != refund.RefundID || rev.Status != "reversed" ||
		rev.AmountMinor != 240000 || rev.Currency != "USD" {
		t.Errorf("reverse_refund = %+v", rev)
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 0 {
		t.Errorf("refunded_minor = %d after the reversal, want 0", o.RefundedMinor)
	}
	_, err := exec(t, p, ToolReverseRefund, "rv-2", fmt.Sprintf(`{"refund_id":%q}`, refund.RefundID))
	if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "already reversed") {
		t.Errorf("second reversal: err = %v, want terminal, already reversed", err)
	}
	_, err = exec(t, p, ToolReverseRefund, "rv-3", `{"refund_id":"rf_01jnq4z7c8m2x5v9w3k6h1t0ab"}`)
	if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "unknown refund") {
		t.Errorf("unknown refund: err = %v, want terminal", err)
	}
	if n := effectCount(t, p, ToolReverseRefund); n != 1 {
		t.Errorf("EffectCount(reverse_refund) = %d, want 1", n)
	}
}

func TestSendCustomerEmail(t *testing.T) {
	p := openTemp(t)
	var got EmailReceipt
	mustExec(t, p, ToolSendCustomerEmail, "em-1", string(ExampleArgs()[ToolSendCustomerEmail]), &got)
	if !strings.HasPrefix(got.MessageID, "msg_") || got.OrderID != "ORD-1004" || got.Status != "sent" {
		t.Errorf("send_customer_email = %+v", got)
	}
	_, err := exec(t, p, ToolSendCustomerEmail, "em-2", `{"order_id":"ORD-1004","to":"attacker@example.net","subject":"s","body":"b"}`)
	if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "not order ORD-1004's customer") {
		t.Errorf("email to a stranger: err = %v, want terminal", err)
	}
	_, err = exec(t, p, ToolSendCustomerEmail, "em-3", `{"order_id":"ORD-1004","to":"daniel.whitaker@example.com","subject":"","body":"b"}`)
	if kindOf(err) != tools.Terminal {
		t.Errorf("empty subject: err = %v, want terminal", err)
	}
	if n := effectCount(t, p, ToolSendCustomerEmail); n != 1 {
		t.Errorf("EffectCount = %d, want 1", n)
	}
}

// TestRefundsCappedByWhatWasPaid: the refunds of one order that were not
// reversed never total more than the order's amount (review finding 2c:
// one run left ORD-1004 with 12 refunds totalling $11,405 on $2,400).
func TestRefundsCappedByWhatWasPaid(t *testing.T) {
	p := openTemp(t)
	refund := func(key string, minor int64) (RefundReceipt, error) {
		t.Helper()
		res, err := exec(t, p, ToolIssueRefund, key,
			fmt.Sprintf(`{"order_id":"ORD-1004","amount_minor":%d,"currency":"USD","account":"9182"}`, minor))
		var rc RefundReceipt
		if err == nil {
			err = json.Unmarshal(res.Output, &rc)
		}
		return rc, err
	}
	first, err := refund("rf-1", 100000)
	if err != nil {
		t.Fatalf("first refund, $1,000.00 of $2,400.00: %v", err)
	}
	if _, err := refund("rf-2", 140000); err != nil {
		t.Fatalf("second refund, to exactly $2,400.00: %v", err)
	}
	_, err = refund("rf-3", 1)
	const want = "refunds of order ORD-1004 would total $2,400.01, more than the $2,400.00 paid"
	if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), want) {
		t.Fatalf("third refund: err = %v, want terminal %q", err, want)
	}
	if n := effectCount(t, p, ToolIssueRefund); n != 2 {
		t.Errorf("EffectCount = %d after the refusal, want 2", n)
	}

	// Reversing the first makes room for a new refund up to its amount.
	var rev ReversalReceipt
	mustExec(t, p, ToolReverseRefund, "rv-1", fmt.Sprintf(`{"refund_id":%q}`, first.RefundID), &rev)
	if _, err := refund("rf-4", 100000); err != nil {
		t.Fatalf("refund after the reversal: %v", err)
	}
	if _, err := refund("rf-5", 1); kindOf(err) != tools.Terminal {
		t.Errorf("refund beyond the cap after the reversal: err = %v, want terminal", err)
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 240000 {
		t.Errorf("refunded_minor = %d, want 240000", o.RefundedMinor)
	}
	// A replay of a refund already counted is its receipt, not a refusal.
	if _, err := refund("rf-2", 140000); err != nil {
		t.Errorf("replay of a counted refund: %v", err)
	}
}

// TestArgumentErrorsNameTheFieldAndRule: a refusal of malformed arguments
// speaks JSON, never Go (review finding 7c).
func TestArgumentErrorsNameTheFieldAndRule(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":"100","currency":"USD","account":"9182"}`, `invalid arguments: "amount_minor" must be a whole number`},
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":1e30,"currency":"USD","account":"9182"}`, `invalid arguments: "amount_minor" must be a whole number`},
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":true,"currency":"USD","account":"9182"}`, `invalid arguments: "amount_minor" must be a whole number`},
		{ToolIssueRefund, `{"order_id":1004,"amount_minor":100,"currency":"USD","account":"9182"}`, `invalid arguments: "order_id" must be a string`},
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182","memo":"x"}`, `invalid arguments: "memo" is not an argument of issue_refund`},
		{ToolSubmitChangeRequest, `{"order_id":"ORD-1001","change":["a"]}`, `invalid arguments: "change" must be a string`},
		{ToolSubmitChangeRequest, `{"order_id":"ORD-1001","change":""}`, `invalid arguments: "change" must be 1 to 2000 characters`},
		{ToolReverseRefund, `{}`, `invalid arguments: "refund_id" is required`},
		{ToolSendCustomerEmail, `{"order_id":"ORD-1004","to":"nobody","subject":"s","body":"b"}`, `invalid arguments: "to" must be an email address`},
		{ToolLookupOrder, `"ORD-1004"`, `invalid arguments: they must be a JSON object`},
		{ToolLookupOrder, `{"order_id":`, `invalid arguments: they are not valid JSON`},
	}
	p := openTemp(t)
	for i, tt := range tests {
		_, err := exec(t, p, tt.tool, fmt.Sprintf("bad-%d", i), tt.args)
		var pe *tools.Error
		if !errors.As(err, &pe) || pe.Kind != tools.Terminal || pe.Reason != tt.want {
			t.Errorf("%s %s: err = %v, want terminal %q", tt.tool, tt.args, err, tt.want)
			continue
		}
		for _, goText := range []string{"json:", "Go ", "struct", "Args", "int64", "of type"} {
			if strings.Contains(err.Error(), goText) {
				t.Errorf("%s %s: error %q speaks Go (%q)", tt.tool, tt.args, err, goText)
			}
		}
	}
}

// TestStoredTextIsRedacted: the simulator keeps its file in Warden's data
// directory, so what it keeps of a change request or an e-mail is
// redacted, with the installation's redactor when it is given one.
func TestStoredTextIsRedacted(t *testing.T) {
	r := redact.New(bytes.Repeat([]byte{1}, 32))
	p, err := Open(context.Background(), filepath.Join(t.TempDir(), "sim.db"), WithRedactor(r))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const email, phone = "mia.wong@example.net", "+44 20 7946 0958"
	var chg ChangeReceipt
	mustExec(t, p, ToolSubmitChangeRequest, "chg-1",
		`{"order_id":"ORD-1001","change":"Call `+phone+` or write to `+email+` before delivery."}`, &chg)
	var msg EmailReceipt
	mustExec(t, p, ToolSendCustomerEmail, "msg-1",
		`{"order_id":"ORD-1004","to":"daniel.whitaker@example.com","subject":"Re: `+email+`","body":"We will call `+phone+`."}`, &msg)

	var change, subject, body string
	if err := p.read.QueryRow(`SELECT change FROM change_requests WHERE id = ?`, chg.ChangeID).Scan(&change); err != nil {
		t.Fatal(err)
	}
	if err := p.read.QueryRow(`SELECT subject, body FROM emails WHERE id = ?`, msg.MessageID).Scan(&subject, &body); err != nil {
		t.Fatal(err)
	}
	if want := "Call " + r.Token("phone", phone) + " or write to " + r.Token("email", email) + " before delivery."; change != want {
		t.Errorf("stored change = %q, want %q", change, want)
	}
	if want := "Re: " + r.Token("email", email); subject != want {
		t.Errorf("stored subject = %q, want %q", subject, want)
	}
	if want := "We will call " + r.Token("phone", phone) + "."; body != want {
		t.Errorf("stored body = %q, want %q", body, want)
	}
}

// TestOpenRedactsWhatAnOlderVersionStored: a version 1 file kept change
// requests and e-mails in the clear; opening it redacts them once.
func TestOpenRedactsWhatAnOlderVersionStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	const email = "mia.wong@example.net"
	writeOldFile(t, path, 1, `INSERT INTO change_requests (id, order_id, change, created_at) VALUES ('chg_old', 'ORD-1001', 'write to `+email+`', '2026-03-01T00:00:00Z');
		INSERT INTO emails (id, order_id, to_addr, subject, body, sent_at) VALUES ('msg_old', 'ORD-1004', 'daniel.whitaker@example.com', 'for `+email+`', 'to `+email+`', '2026-03-01T00:00:00Z')`)

	r := redact.New(bytes.Repeat([]byte{2}, 32))
	p, err := Open(context.Background(), path, WithRedactor(r))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var change, subject, body string
	var version int
	p.read.QueryRow(`SELECT change FROM change_requests WHERE id = 'chg_old'`).Scan(&change)
	p.read.QueryRow(`SELECT subject, body FROM emails WHERE id = 'msg_old'`).Scan(&subject, &body)
	p.read.QueryRow(`PRAGMA user_version`).Scan(&version)
	tok := r.Token("email", email)
	if change != "write to "+tok || subject != "for "+tok || body != "to "+tok || version != schemaVersion {
		t.Errorf("after reopening: change %q, subject %q, body %q, version %d; want %s redacted, version %d",
			change, subject, body, version, email, schemaVersion)
	}
}

func TestIdempotentReplayReturnsTheFirstReceipt(t *testing.T) {
	p := openTemp(t)
	first, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
	if err != nil {
		t.Fatal(err)
	}
	// The same arguments written another way are the same call.
	reordered := `{ "account": "GB74BUKB20201555559182", "currency": "USD", "amount_minor": 240000, "order_id": "ORD-1004" }`
	for _, args := range []string{refundArgs, refundArgs, reordered} {
		again, err := exec(t, p, ToolIssueRefund, "idem-1", args)
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		if string(again.Output) != string(first.Output) || again.Units != first.Units {
			t.Errorf("replay = %s, %d units; want the first receipt %s, %d", again.Output, again.Units, first.Output, first.Units)
		}
	}
	if n := effectCount(t, p, ToolIssueRefund); n != 1 {
		t.Errorf("EffectCount = %d after replays, want 1", n)
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 240000 {
		t.Errorf("refunded_minor = %d, want one refund of 240000", o.RefundedMinor)
	}
}

func TestKeyReusedForSomethingElseIsRefused(t *testing.T) {
	p := openTemp(t)
	if _, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call tools.Call
	}{
		{"other amount", tools.Call{Tool: ToolIssueRefund, IdempotencyKey: "idem-1", Tenant: "acme",
			Args: json.RawMessage(`{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"GB74BUKB20201555559182"}`)}},
		{"other tenant", tools.Call{Tool: ToolIssueRefund, IdempotencyKey: "idem-1", Tenant: "globex", Args: json.RawMessage(refundArgs)}},
		{"other tool", tools.Call{Tool: ToolSendCustomerEmail, IdempotencyKey: "idem-1", Tenant: "acme", Args: ExampleArgs()[ToolSendCustomerEmail]}},
	}
	for _, tt := range tests {
		_, err := p.Execute(context.Background(), tool(t, tt.call.Tool), tt.call)
		if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "idempotency key reused with different arguments") {
			t.Errorf("%s: err = %v, want terminal, key reused", tt.name, err)
		}
	}
	if n := effectCount(t, p, ""); n != 1 {
		t.Errorf("EffectCount = %d, want 1", n)
	}
}

func TestConcurrentCallsWithOneKeyHaveOneEffect(t *testing.T) {
	p := openTemp(t)
	const n = 20
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		outputs = make([]string, n)
		errs    = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			res, err := exec(t, p, ToolIssueRefund, "same-key", refundArgs)
			outputs[i], errs[i] = string(res.Output), err
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("goroutine %d: %v", i, errs[i])
		} else if outputs[i] != outputs[0] {
			t.Errorf("goroutine %d got %s, want %s", i, outputs[i], outputs[0])
		}
	}
	if got := effectCount(t, p, ToolIssueRefund); got != 1 {
		t.Errorf("EffectCount = %d, want exactly 1", got)
	}
}

func TestLookup(t *testing.T) {
	p := openTemp(t)
	refund := tool(t, ToolIssueRefund)
	res, status, err := p.Lookup(context.Background(), refund, "idem-1")
	if status != tools.LookupNotFound || err != nil || res.Output != nil {
		t.Errorf("Lookup before = %s, %s, %v; want not_found", res.Output, status, err)
	}
	first, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
	if err != nil {
		t.Fatal(err)
	}
	res, status, err = p.Lookup(context.Background(), refund, "idem-1")
	if status != tools.LookupCommitted || err != nil || string(res.Output) != string(first.Output) || res.Units != 1 {
		t.Errorf("Lookup after = %s, %d, %s, %v; want committed with %s, 1", res.Output, res.Units, status, err, first.Output)
	}
	_, status, err = p.Lookup(context.Background(), tool(t, ToolSendCustomerEmail), "idem-1")
	if status != tools.LookupUnknown || err == nil {
		t.Errorf("Lookup under another tool = %s, %v; want unknown with an error", status, err)
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	p, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	first, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	p, err = Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	again, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
	if err != nil || string(again.Output) != string(first.Output) {
		t.Errorf("replay after reopen = %s, %v; want %s", again.Output, err, first.Output)
	}
	if n := effectCount(t, p, ""); n != 1 {
		t.Errorf("EffectCount after reopen = %d, want 1", n)
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 240000 {
		t.Errorf("refunded_minor after reopen = %d, want 240000 (not reseeded)", o.RefundedMinor)
	}
	effects, err := p.Effects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(effects) != 1 || effects[0].IdempotencyKey != "idem-1" || effects[0].Tool != ToolIssueRefund ||
		effects[0].Tenant != "acme" || len(effects[0].ArgsDigest) != 64 || string(effects[0].Receipt) != string(first.Output) ||
		effects[0].CommittedAt.IsZero() {
		t.Errorf("Effects = %+v", effects)
	}
}

func TestDatabaseFileIsPrivate(t *testing.T) {
	p := openTemp(t)
	if _, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p.Path(), p.Path() + "-wal"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s mode = %o, want 600", filepath.Base(f), mode)
		}
	}
}

func TestFailNextIsTransientThenSucceeds(t *testing.T) {
	p := openTemp(t)
	p.SetFaults(Faults{FailNext: 2})
	for i := range 2 {
		_, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
		if kindOf(err) != tools.Transient {
			t.Errorf("call %d: err = %v, want transient", i+1, err)
		}
	}
	if n := effectCount(t, p, ""); n != 0 {
		t.Errorf("EffectCount = %d after injected failures, want 0", n)
	}
	if _, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs); err != nil {
		t.Errorf("third call: %v, want success", err)
	}

	// Through the retry helper, the failures are absorbed within
	// MaxAttempts (3) and the effect happens once.
	p.SetFaults(Faults{FailNext: 2})
	r := tools.WithRetry(p, tools.RetryOptions{InitialInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond})
	call := tools.Call{Tool: ToolSendCustomerEmail, Args: ExampleArgs()[ToolSendCustomerEmail], IdempotencyKey: "idem-2", Tenant: "acme"}
	if _, err := r.Execute(context.Background(), tool(t, ToolSendCustomerEmail), call); err != nil {
		t.Errorf("with retry: %v", err)
	}
	if n := effectCount(t, p, ""); n != 2 {
		t.Errorf("EffectCount = %d, want 2", n)
	}
}

func TestLostReplyIsRecoveredWithTheSameKey(t *testing.T) {
	p := openTemp(t)
	p.SetFaults(Faults{LoseNext: 1})
	_, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
	if kindOf(err) != tools.Transient {
		t.Fatalf("err = %v, want transient (reply lost)", err)
	}
	res, status, err := p.Lookup(context.Background(), tool(t, ToolIssueRefund), "idem-1")
	if status != tools.LookupCommitted || err != nil {
		t.Fatalf("Lookup = %s, %v; want committed: the effect happened", status, err)
	}
	again, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs)
	if err != nil || string(again.Output) != string(res.Output) {
		t.Errorf("retry = %s, %v; want the committed receipt %s", again.Output, err, res.Output)
	}
	if n := effectCount(t, p, ""); n != 1 {
		t.Errorf("EffectCount = %d, want 1", n)
	}
}

func TestAfterCommitSeesADurableEffect(t *testing.T) {
	p := openTemp(t)
	// A second handle on the file plays a process started after a crash.
	other, err := Open(context.Background(), p.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	var calls []string
	refund := tool(t, ToolIssueRefund)
	p.SetFaults(Faults{AfterCommit: func(name, key string) {
		_, status, err := other.Lookup(context.Background(), refund, key)
		calls = append(calls, fmt.Sprintf("%s %s %s %v", name, key, status, err))
	}})
	if _, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(t, p, ToolIssueRefund, "idem-1", refundArgs); err != nil { // a replay: no new commit
		t.Fatal(err)
	}
	if _, err := exec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`); err != nil { // a read: no commit
		t.Fatal(err)
	}
	want := []string{"issue_refund idem-1 committed <nil>"}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("AfterCommit calls = %q, want %q", calls, want)
	}
}

func TestDelayHonoursTheCallersDeadline(t *testing.T) {
	p := openTemp(t)
	p.SetFaults(Faults{Delay: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Execute(ctx, tool(t, ToolIssueRefund),
		tools.Call{Tool: ToolIssueRefund, Args: json.RawMessage(refundArgs), IdempotencyKey: "idem-1", Tenant: "acme"})
	if kindOf(err) != tools.Transient || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want transient deadline exceeded", err)
	}
	if n := effectCount(t, p, ""); n != 0 {
		t.Errorf("EffectCount = %d, want 0", n)
	}
}

func TestCancelledCallIsTransient(t *testing.T) {
	p := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Execute(ctx, tool(t, ToolIssueRefund),
		tools.Call{Tool: ToolIssueRefund, Args: json.RawMessage(refundArgs), IdempotencyKey: "idem-1", Tenant: "acme"})
	if kindOf(err) != tools.Transient {
		t.Errorf("err = %v, want transient", err)
	}
	if n := effectCount(t, p, ""); n != 0 {
		t.Errorf("EffectCount = %d, want 0", n)
	}
}
