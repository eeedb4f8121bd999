package runbooks

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
)

// mcpShop registers the MCP server shop with its tool issue_refund, as
// the default runbook mcp-server-misbehaving names them.
func mcpShop(t *testing.T, ctx context.Context, db *store.DB) {
	t.Helper()
	sealer, err := seal.New(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcpservers.Create(ctx, db, sealer, audit.Actor{Type: audit.ActorSystem, ID: "test"},
		mcpservers.Server{Name: "shop", URL: "https://shop.example.com/mcp", Timeout: time.Second, Enabled: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_tools (server_id, name, description, input_schema, digest, discovered_at, updated_at)
			VALUES (?, 'issue_refund', 'Refund', '{"type":"object"}', 'd', ?, ?)`, s.ID, store.Now(), store.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// The default runbook mcp-server-misbehaving switches an MCP tool and its
// server off with the presser's reason, once; pressing again changes and
// records nothing; a server Warden does not know is a 404 before anything
// runs.
func TestRunbookSwitchesMCPServerOff(t *testing.T) {
	d, ctx := setup(t)
	if rb, ok := d.Runbooks.Get("mcp-server-misbehaving"); !ok || rb.Action("switch-off-shop") == nil {
		t.Fatal("the default runbook mcp-server-misbehaving has no switch-off-shop")
	}
	rb, _ := d.Runbooks.Get("mcp-server-misbehaving")
	if _, err := PlanAction(ctx, d, *rb.Action("switch-off-shop")); httpStatus(err) != 404 {
		t.Fatalf("plan before shop exists: %v, want 404", err)
	}
	mcpShop(t, ctx, d.DB)
	p, err := PlanAction(ctx, d, *rb.Action("switch-off-shop"))
	if err != nil || p.NoChange || p.Tenant != "" {
		t.Fatalf("plan = %+v, %v", p, err)
	}

	run, err := Run(ctx, d, carol, "mcp-server-misbehaving", "switch-off-shop-issue-refund", "refunds twice", "tok-tool")
	if err != nil || run.Status != StatusDone {
		t.Fatalf("switch the tool off = %+v, %v", run, err)
	}
	if tl, _ := mcpservers.GetTool(ctx, d.DB.Read(), "shop", "issue_refund"); tl.Enabled {
		t.Error("shop__issue_refund is still on")
	}
	run, err = Run(ctx, d, carol, "mcp-server-misbehaving", "switch-off-shop", "upstream answers garbage", "tok-1")
	if err != nil || run.Status != StatusDone || run.Outcome != "Switched the MCP server shop off." {
		t.Fatalf("switch off = %+v, %v", run, err)
	}
	again, err := Run(ctx, d, carol, "mcp-server-misbehaving", "switch-off-shop", "still garbage", "tok-2")
	if err != nil || again.Outcome != "The MCP server shop was already off; nothing changed." {
		t.Fatalf("second press = %+v, %v", again, err)
	}
	if s, _ := mcpservers.Get(ctx, d.DB.Read(), "shop"); s.Enabled {
		t.Error("shop is still on")
	}
	if n := countVerb(t, d.DB, "mcp.server_disable"); n != 1 {
		t.Errorf("%d mcp.server_disable events, want 1", n)
	}
	if r, _ := mcpservers.OffReason(ctx, d.DB.Read(), "shop", ""); r != "upstream answers garbage" {
		t.Errorf("the switch's reason = %q", r)
	}
	if r, _ := mcpservers.OffReason(ctx, d.DB.Read(), "shop", "issue_refund"); r != "refunds twice" {
		t.Errorf("the tool switch's reason = %q", r)
	}
	// Switching it back on waits for a second admin (docs/changes.md).
	if run, err := Run(ctx, d, carol, "mcp-server-misbehaving", "switch-on-shop", "fixed", "tok-3"); err != nil || !strings.HasPrefix(run.Outcome, WaitsPrefix) {
		t.Fatalf("switch on = %+v, %v; want it to wait for a second admin", run, err)
	}
	if s, _ := mcpservers.Get(ctx, d.DB.Read(), "shop"); s.Enabled {
		t.Error("shop is on before a second admin approved")
	}
	if cs, _ := changes.PendingOn(ctx, d.DB.Read(), "shop", time.Now(), changes.MCPServerSwitch); len(cs) != 1 {
		t.Errorf("pending changes on shop = %d, want 1", len(cs))
	}
}
