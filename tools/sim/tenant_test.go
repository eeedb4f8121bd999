package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/tools"
)

// execAs executes a call of tenant.
func execAs(t testing.TB, p *Provider, tenant, name, key, args string) (tools.Result, error) {
	t.Helper()
	return p.Execute(context.Background(), tool(t, name),
		tools.Call{Tool: name, Args: json.RawMessage(args), IdempotencyKey: key, Tenant: tenant})
}

// TestAnotherTenantsOrderIsUnknown: the demo orders are acme's. For
// globex every tool that touches one of them answers "unknown order",
// word for word what an order that does not exist gets, and changes
// nothing; acme's own calls still work.
func TestAnotherTenantsOrderIsUnknown(t *testing.T) {
	p := openTemp(t)
	ctx := context.Background()
	var refund RefundReceipt
	mustExec(t, p, ToolIssueRefund, "acme-rf", `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182"}`, &refund)

	calls := map[string]string{
		ToolLookupOrder:         `{"order_id":"ORD-1003"}`,
		ToolCheckChangeWindow:   `{"order_id":"ORD-1001"}`,
		ToolSubmitChangeRequest: `{"order_id":"ORD-1001","change":"Deliver to the side door."}`,
		ToolIssueRefund:         `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182"}`,
		ToolSendCustomerEmail:   `{"order_id":"ORD-1004","to":"daniel.whitaker@example.com","subject":"Your refund","body":"Done."}`,
		ToolReverseRefund:       fmt.Sprintf(`{"refund_id":%q}`, refund.RefundID),
	}
	for name, args := range calls {
		want := "unknown order"
		if name == ToolReverseRefund {
			want = "unknown refund " + refund.RefundID
		}
		res, err := execAs(t, p, "globex", name, "globex-"+name, args)
		if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), want) || res.Output != nil {
			t.Errorf("globex %s: %s, %v; want terminal %q and no answer", name, res.Output, err, want)
		}
		if err := p.Check(ctx, tool(t, name), tools.Call{Tool: name, Args: json.RawMessage(args), Tenant: "globex"}); kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), want) {
			t.Errorf("globex Check %s: %v; want terminal %q", name, err, want)
		}
		if err := p.Check(ctx, tool(t, name), tools.Call{Tool: name, Args: json.RawMessage(args), Tenant: "acme"}); err != nil {
			t.Errorf("acme Check %s: %v; want nil", name, err)
		}
	}
	// The same sentence as for an order nobody has: nothing tells globex
	// that ORD-1003 exists.
	_, theirs := execAs(t, p, "globex", ToolLookupOrder, "", `{"order_id":"ORD-1003"}`)
	_, nobodys := execAs(t, p, "globex", ToolLookupOrder, "", `{"order_id":"ORD-9003"}`)
	if strings.ReplaceAll(theirs.Error(), "1003", "N") != strings.ReplaceAll(nobodys.Error(), "9003", "N") {
		t.Errorf("another tenant's order answers %q, a missing one %q; want the same", theirs, nobodys)
	}

	if n := effectCount(t, p, ""); n != 1 {
		t.Errorf("effects after globex's calls = %d, want acme's 1", n)
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 100 {
		t.Errorf("acme's ORD-1004 refunded_minor = %d, want 100", o.RefundedMinor)
	}
	var rv ReversalReceipt
	mustExec(t, p, ToolReverseRefund, "acme-rv", fmt.Sprintf(`{"refund_id":%q}`, refund.RefundID), &rv)
}

// TestTenantsHaveOrdersOfTheirOwn: two tenants may each have an order
// ORD-1004; refunds and their caps are counted per tenant.
func TestTenantsHaveOrdersOfTheirOwn(t *testing.T) {
	p := openTemp(t)
	mine := demoOrder(t, "ORD-1004")
	mine.AmountMinor, mine.Items = 500, []Item{{SKU: "PEN-1", Name: "Pen", Quantity: 1, UnitMinor: 500}}
	if err := p.AddOrders(context.Background(), "globex", mine); err != nil {
		t.Fatal(err)
	}
	args := `{"order_id":"ORD-1004","amount_minor":500,"currency":"USD","account":"9182"}`
	if _, err := execAs(t, p, "globex", ToolIssueRefund, "globex-1", args); err != nil {
		t.Fatalf("globex's refund of its own order: %v", err)
	}
	if _, err := execAs(t, p, "globex", ToolIssueRefund, "globex-2", args); kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "more than the $5.00 paid") {
		t.Errorf("globex's second refund: %v; want refused above its order's $5.00", err)
	}
	var acme, globex Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &acme)
	res, err := execAs(t, p, "globex", ToolLookupOrder, "", `{"order_id":"ORD-1004"}`)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(res.Output, &globex)
	if acme.AmountMinor != 240000 || acme.RefundedMinor != 0 || globex.AmountMinor != 500 || globex.RefundedMinor != 500 {
		t.Errorf("acme's ORD-1004 %d refunded %d, globex's %d refunded %d; want 240000/0 and 500/500",
			acme.AmountMinor, acme.RefundedMinor, globex.AmountMinor, globex.RefundedMinor)
	}
}

func TestCallWithoutTenantIsRefused(t *testing.T) {
	p := openTemp(t)
	for _, name := range []string{ToolLookupOrder, ToolIssueRefund} {
		_, err := execAs(t, p, "", name, "k", refundArgs)
		if kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "must name its tenant") {
			t.Errorf("%s without a tenant: %v; want terminal", name, err)
		}
	}
	if n := effectCount(t, p, ""); n != 0 {
		t.Errorf("effects = %d, want 0", n)
	}
}

// v2Schema is the layout of schema versions 1 and 2, before orders had a
// tenant.
const v2Schema = `
CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL, amount_minor INTEGER NOT NULL, currency TEXT NOT NULL,
	customer_name TEXT NOT NULL, customer_email TEXT NOT NULL, account TEXT NOT NULL, address TEXT NOT NULL,
	items TEXT NOT NULL, placed_at TEXT NOT NULL);
CREATE TABLE effects (idempotency_key TEXT PRIMARY KEY, tool TEXT NOT NULL, tenant TEXT NOT NULL, args_digest TEXT NOT NULL,
	receipt TEXT NOT NULL, units INTEGER NOT NULL, committed_at TEXT NOT NULL);
CREATE TABLE refunds (id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id), amount_minor INTEGER NOT NULL,
	currency TEXT NOT NULL, account TEXT NOT NULL, created_at TEXT NOT NULL, reversal_id TEXT);
CREATE INDEX refunds_order ON refunds(order_id);
CREATE TABLE change_requests (id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id), change TEXT NOT NULL,
	created_at TEXT NOT NULL);
CREATE TABLE emails (id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id), to_addr TEXT NOT NULL,
	subject TEXT NOT NULL, body TEXT NOT NULL, sent_at TEXT NOT NULL);
`

// writeOldFile makes a simulator file of schema version (1 or 2) holding
// the demo orders and the rows of extra.
func writeOldFile(t *testing.T, path string, version int, extra string) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, "immediate"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(v2Schema); err != nil {
		t.Fatal(err)
	}
	for _, o := range DemoOrders() {
		items, _ := json.Marshal(o.Items)
		if _, err := db.Exec(`INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, o.ID, o.Status, o.AmountMinor, o.Currency,
			o.CustomerName, o.CustomerEmail, o.Account, o.Address, string(items), formatTime(o.PlacedAt)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(extra + fmt.Sprintf(`; PRAGMA user_version = %d`, version)); err != nil {
		t.Fatal(err)
	}
}

// TestOpenGivesAnOlderFilesOrdersToTheDemoTenant: a version 2 file's
// orders, refunds, change requests and e-mails become acme's, kept as
// they were (a refund still counts against its order's cap and can be
// reversed), and no other tenant sees them.
func TestOpenGivesAnOlderFilesOrdersToTheDemoTenant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	writeOldFile(t, path, 2, `
		INSERT INTO refunds VALUES ('rf_old', 'ORD-1004', 240000, 'USD', 'GB74BUKB20201555559182', '2026-03-01T00:00:00Z', NULL);
		INSERT INTO change_requests VALUES ('chg_old', 'ORD-1001', 'side door', '2026-03-01T00:00:00Z');
		INSERT INTO emails VALUES ('msg_old', 'ORD-1004', 'daniel.whitaker@example.com', 'Refund', 'Done', '2026-03-01T00:00:00Z');
		INSERT INTO effects VALUES ('idem-old', 'issue_refund', 'acme', 'd', '{"refund_id":"rf_old"}', 1, '2026-03-01T00:00:00Z')`)
	p, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	var version, orders int
	var fk string
	p.read.QueryRow(`PRAGMA user_version`).Scan(&version)
	p.read.QueryRow(`SELECT count(*) FROM orders WHERE tenant = 'acme'`).Scan(&orders)
	p.read.QueryRow(`SELECT group_concat("table") FROM pragma_foreign_key_list('refunds')`).Scan(&fk)
	if version != schemaVersion || orders != len(DemoOrders()) || fk != "orders,orders" {
		t.Errorf("after opening: version %d, acme's orders %d, refunds reference %q; want %d, %d, the orders table",
			version, orders, fk, schemaVersion, len(DemoOrders()))
	}
	var o Order
	mustExec(t, p, ToolLookupOrder, "", `{"order_id":"ORD-1004"}`, &o)
	if o.RefundedMinor != 240000 {
		t.Errorf("acme's ORD-1004 refunded_minor = %d, want the old file's 240000", o.RefundedMinor)
	}
	if _, err := exec(t, p, ToolIssueRefund, "idem-old", refundArgs); kindOf(err) != tools.Terminal {
		t.Errorf("the old effect's key reused: %v; want refused", err)
	}
	if _, err := execAs(t, p, "globex", ToolReverseRefund, "globex-rv", `{"refund_id":"rf_old"}`); kindOf(err) != tools.Terminal || !strings.Contains(err.Error(), "unknown refund") {
		t.Errorf("globex reversing acme's old refund: %v; want unknown refund", err)
	}
	var rv ReversalReceipt
	mustExec(t, p, ToolReverseRefund, "acme-rv", `{"refund_id":"rf_old"}`, &rv)
	for table, want := range map[string]int{"change_requests": 1, "emails": 1, "refunds": 1} {
		var n int
		p.read.QueryRow(`SELECT count(*) FROM ` + table + ` WHERE tenant = 'acme'`).Scan(&n)
		if n != want {
			t.Errorf("acme's %s = %d, want %d", table, n, want)
		}
	}
	var leftover int
	p.read.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v2' OR name = 'refunds_order'`).Scan(&leftover)
	if leftover != 0 {
		t.Errorf("%d tables or indexes of the old layout are left", leftover)
	}
}
