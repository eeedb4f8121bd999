package sim

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

func compileSchema(t *testing.T, tl tools.Tool) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.ArgsSchema))
	if err != nil {
		t.Fatalf("%s schema is not JSON: %v", tl.Name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "urn:warden:tool:" + tl.Name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s schema: %v", tl.Name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s schema does not compile: %v", tl.Name, err)
	}
	return s
}

func validate(s *jsonschema.Schema, args string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func TestCatalogEntries(t *testing.T) {
	want := []struct {
		name         string
		impact       risk.Impact
		rev          risk.Reversibility
		compensating string
		cost         int64
	}{
		{ToolLookupOrder, risk.ImpactLow, risk.Reversible, "", 1000},
		{ToolCheckChangeWindow, risk.ImpactLow, risk.Reversible, "", 1000},
		{ToolSubmitChangeRequest, risk.ImpactMedium, risk.Reversible, "", 5000},
		{ToolIssueRefund, risk.ImpactHigh, risk.Compensatable, ToolReverseRefund, 20000},
		{ToolReverseRefund, risk.ImpactHigh, risk.Irreversible, "", 20000},
		{ToolSendCustomerEmail, risk.ImpactHigh, risk.Irreversible, "", 20000},
	}
	got := Catalog()
	if len(got) != len(want) {
		t.Fatalf("Catalog has %d tools, want %d", len(got), len(want))
	}
	names := map[string]bool{}
	for i, w := range want {
		g := got[i]
		names[g.Name] = true
		if g.Name != w.name || g.Impact != w.impact || g.Reversibility != w.rev || g.CompensatingTool != w.compensating ||
			g.UnitCostMicros != w.cost {
			t.Errorf("Catalog()[%d] = %s %s %s %q %d, want %s %s %s %q %d", i,
				g.Name, g.Impact, g.Reversibility, g.CompensatingTool, g.UnitCostMicros,
				w.name, w.impact, w.rev, w.compensating, w.cost)
		}
		if g.Provider != tools.ProviderBuiltin || !g.Enabled || g.Timeout != 2*time.Second || g.MaxAttempts != 3 ||
			g.ApprovalTTL != 24*time.Hour || g.Description == "" || g.WebhookURL != "" {
			t.Errorf("%s defaults = %+v", g.Name, g)
		}
		if _, ok := ops[g.Name]; !ok {
			t.Errorf("%s is in the catalog but the simulator cannot run it", g.Name)
		}
	}
	for name := range ops {
		if !names[name] {
			t.Errorf("the simulator runs %s but the catalog does not list it", name)
		}
	}
	for _, g := range got {
		if g.CompensatingTool != "" && !names[g.CompensatingTool] {
			t.Errorf("%s compensates with %s, which is not in the catalog", g.Name, g.CompensatingTool)
		}
	}
}

func TestCatalogSchemasAcceptTheExamples(t *testing.T) {
	examples := ExampleArgs()
	for _, tl := range Catalog() {
		s := compileSchema(t, tl)
		ex, ok := examples[tl.Name]
		if !ok {
			t.Errorf("no example arguments for %s", tl.Name)
			continue
		}
		if err := validate(s, string(ex)); err != nil {
			t.Errorf("%s example %s does not validate: %v", tl.Name, ex, err)
		}
		// And the schema is not a rubber stamp.
		for _, bad := range []string{`{}`, `[]`, strings.TrimSuffix(string(ex), "}") + `,"extra":1}`} {
			if err := validate(s, bad); err == nil {
				t.Errorf("%s schema accepts %s", tl.Name, bad)
			}
		}
	}
}

func TestCatalogSchemasAgreeWithExecute(t *testing.T) {
	// Arguments the schema refuses, Execute refuses too, and the
	// examples the schema accepts run.
	tests := []struct {
		tool, args string
	}{
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":0,"currency":"USD","account":"9182"}`},
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":1.5,"currency":"USD","account":"9182"}`},
		{ToolIssueRefund, `{"order_id":"ORD-1004","amount_minor":100,"currency":"usd","account":"9182"}`},
		{ToolSubmitChangeRequest, `{"order_id":"ORD-1001","change":""}`},
		{ToolSubmitChangeRequest, `{"order_id":"ORD-1001","change":"` + strings.Repeat("x", maxChangeLen+1) + `"}`},
		{ToolSendCustomerEmail, `{"order_id":"ORD-1004","to":"not an address","subject":"s","body":"b"}`},
		{ToolSendCustomerEmail, `{"order_id":"ORD-1004","to":"daniel.whitaker@example.com","subject":"` + strings.Repeat("s", maxSubjectLen+1) + `","body":"b"}`},
	}
	p := openTemp(t)
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range Catalog() {
		schemas[tl.Name] = compileSchema(t, tl)
	}
	for i, tt := range tests {
		if err := validate(schemas[tt.tool], tt.args); err == nil {
			t.Errorf("%s schema accepts %.80s", tt.tool, tt.args)
		}
		if _, err := exec(t, p, tt.tool, "k"+string(rune('a'+i)), tt.args); kindOf(err) != tools.Terminal {
			t.Errorf("%s Execute(%.80s) err = %v, want terminal", tt.tool, tt.args, err)
		}
	}
	for name, args := range ExampleArgs() {
		if name == ToolReverseRefund {
			continue // its refund id is a placeholder
		}
		if _, err := exec(t, p, name, "example-"+name, string(args)); err != nil {
			t.Errorf("%s example: %v", name, err)
		}
	}
}

func TestDemoOrders(t *testing.T) {
	orders := DemoOrders()
	if len(orders) != 10 {
		t.Fatalf("%d demo orders, want 10", len(orders))
	}
	last4s := map[string]string{}
	for i, o := range orders {
		if want := fmt.Sprintf("ORD-%d", 1001+i); o.ID != want {
			t.Errorf("order %d id = %s, want %s", i, o.ID, want)
		}
		var sum int64
		for _, it := range o.Items {
			sum += it.Quantity * it.UnitMinor
		}
		if sum != o.AmountMinor || o.Currency != "USD" {
			t.Errorf("%s items sum to %d, amount %d %s", o.ID, sum, o.AmountMinor, o.Currency)
		}
		if !strings.HasSuffix(o.CustomerEmail, "@example.com") || o.CustomerName == "" || o.Address == "" || o.PlacedAt.IsZero() {
			t.Errorf("%s customer = %q %q %q %v", o.ID, o.CustomerName, o.CustomerEmail, o.Address, o.PlacedAt)
		}
		if !validIBAN(o.Account) || o.AccountLast4 != o.Account[len(o.Account)-4:] {
			t.Errorf("%s account %s (last4 %s) is not a valid IBAN", o.ID, o.Account, o.AccountLast4)
		}
		if prev, dup := last4s[o.AccountLast4]; dup {
			t.Errorf("%s and %s share account last4 %s", prev, o.ID, o.AccountLast4)
		}
		last4s[o.AccountLast4] = o.ID
	}
	demo := demoOrder(t, RefundDemoOrder)
	if demo.AmountMinor != 240000 || demo.Currency != "USD" || demo.AccountLast4 != "9182" {
		t.Errorf("refund demo order = %s %d %s account …%s, want USD 2,400.00 account …9182",
			demo.ID, demo.AmountMinor, demo.Currency, demo.AccountLast4)
	}
	// The slice is the caller's own.
	orders[0].ID = "changed"
	if DemoOrders()[0].ID != "ORD-1001" {
		t.Errorf("DemoOrders shares its slice with callers")
	}
}

// validIBAN checks an IBAN's mod-97 check digits.
func validIBAN(s string) bool {
	if len(s) < 15 {
		return false
	}
	var digits strings.Builder
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			digits.WriteRune(c)
		case c >= 'A' && c <= 'Z':
			digits.WriteString(big.NewInt(int64(c - 'A' + 10)).String())
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

func TestSeededOnlyOnce(t *testing.T) {
	p := openTemp(t)
	if _, err := p.write.ExecContext(context.Background(), `UPDATE orders SET status = 'shipped' WHERE id = 'ORD-1001'`); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p2, err := Open(context.Background(), p.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	var o Order
	mustExec(t, p2, ToolLookupOrder, "", `{"order_id":"ORD-1001"}`, &o)
	if o.Status != StatusShipped {
		t.Errorf("ORD-1001 status after reopen = %s, want shipped: reopening must not reseed", o.Status)
	}
	var n int
	if err := p2.read.QueryRow(`SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 10 {
		t.Errorf("orders after reopen = %d, %v; want 10", n, err)
	}
}
