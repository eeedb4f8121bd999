package mcpservers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

var consoleAdmin = audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}

// consoleRig is a database with server crm and its tool refund (an
// amount in minor units, a currency, an order) as a discovery leaves it.
func consoleRig(t *testing.T) (*store.DB, *seal.Sealer) {
	t.Helper()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Create(ctx, db, sealer, consoleAdmin, Server{Name: "crm", URL: "https://crm.example.com/mcp", Timeout: time.Second, Enabled: true}, "tok-1")
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","properties":{"amount":{"type":"integer"},"price":{"type":"number"},"currency":{"type":"string"},"order":{"type":"string"}}}`
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_tools (server_id, name, description, input_schema, digest, discovered_at, updated_at)
			VALUES (?, 'refund', 'Refund an order', ?, 'd1', ?, ?)`, s.ID, schema, store.Now(), store.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return db, sealer
}

func consoleEvents(t *testing.T, db *store.DB, verb string) []audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Event
	for _, ev := range evs {
		if ev.Verb == verb {
			out = append(out, ev)
		}
	}
	return out
}

func TestClassValidate(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"amount":{"type":"integer"},"price":{"type":"number"},"currency":{"type":"string"},"order":{"type":"string"}}}`)
	for _, tc := range []struct {
		name  string
		class Class
		want  map[string]string // field: a word of the message
	}{
		{"no money", Class{Impact: ImpactLow}, nil},
		{"all three", Class{Impact: ImpactHigh, AmountArg: "amount", CurrencyArg: "currency", TargetArg: "order", UnitCostMicros: 50000}, nil},
		{"target only", Class{Impact: ImpactHigh, TargetArg: "order"}, nil},
		{"no impact", Class{}, map[string]string{"impact": "low or high"}},
		{"unknown argument", Class{Impact: ImpactHigh, TargetArg: "customer"}, map[string]string{"target_arg": `no property "customer"`}},
		{"not a name", Class{Impact: ImpactHigh, TargetArg: "a.b"}, map[string]string{"target_arg": "top-level"}},
		{"amount a number", Class{Impact: ImpactHigh, AmountArg: "price", CurrencyArg: "currency"}, map[string]string{"amount_arg": "integer"}},
		{"amount without currency", Class{Impact: ImpactHigh, AmountArg: "amount"}, map[string]string{"currency_arg": "currency"}},
		{"currency without amount", Class{Impact: ImpactHigh, CurrencyArg: "currency"}, map[string]string{"amount_arg": "amount argument too"}},
		{"same argument twice", Class{Impact: ImpactHigh, AmountArg: "amount", CurrencyArg: "amount"}, map[string]string{"currency_arg": "another argument"}},
		{"negative cost", Class{Impact: ImpactLow, UnitCostMicros: -1}, map[string]string{"unit_cost": "negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.class.Validate(schema)
			if len(got) != len(tc.want) {
				t.Fatalf("errors %v, want fields %v", got, tc.want)
			}
			for f, word := range tc.want {
				if !strings.Contains(got[f], word) {
					t.Errorf("%s: %q, want it to say %q", f, got[f], word)
				}
			}
		})
	}
}

// Classifying stores the money arguments and unit cost with the class,
// audited; a class that does not fit the schema changes nothing.
func TestClassifyMoneyArguments(t *testing.T) {
	db, _ := consoleRig(t)
	ctx := context.Background()
	bad := Class{Impact: ImpactHigh, AmountArg: "amount", CurrencyArg: "curr", Digest: "d1"}
	var invalid *store.ValidationError
	if err := Classify(ctx, db, consoleAdmin, "crm", "refund", bad); !errors.As(err, &invalid) || invalid.Fields["currency_arg"] == "" {
		t.Fatalf("classify with an unknown currency argument: %v", err)
	}
	c := Class{Impact: ImpactHigh, AmountArg: "amount", CurrencyArg: "currency", TargetArg: "order", UnitCostMicros: 20000, Digest: "d1"}
	if err := Classify(ctx, db, consoleAdmin, "crm", "refund", c); err != nil {
		t.Fatal(err)
	}
	if err := Classify(ctx, db, consoleAdmin, "crm", "refund", c); err != nil {
		t.Fatal(err)
	}
	tl, err := GetTool(ctx, db.Read(), "crm", "refund")
	if err != nil {
		t.Fatal(err)
	}
	if tl.Impact != ImpactHigh || tl.AmountArg != "amount" || tl.CurrencyArg != "currency" || tl.TargetArg != "order" || tl.UnitCostMicros != 20000 {
		t.Errorf("stored %+v", tl)
	}
	evs := consoleEvents(t, db, "mcp.tool_classify")
	if len(evs) != 1 || evs[0].Details["amount_arg"] != "amount" || evs[0].Details["target_arg"] != "order" {
		t.Errorf("classify events = %+v", evs)
	}
}

// A tool's switch: off needs a reason, kept in its audit event; pressing
// it again records nothing; on again.
func TestSetToolEnabled(t *testing.T) {
	db, _ := consoleRig(t)
	ctx := context.Background()
	if _, err := SetToolEnabled(ctx, db, consoleAdmin, "crm", "refund", false, "  "); problem.From(err).Code != "reason_required" {
		t.Fatalf("off without a reason: %v", err)
	}
	if _, err := SetToolEnabled(ctx, db, consoleAdmin, "crm", "nope", false, "x"); !errors.Is(err, ErrToolNotFound) {
		t.Fatalf("unknown tool: %v", err)
	}
	for i, want := range []bool{true, false} {
		changed, err := SetToolEnabled(ctx, db, consoleAdmin, "crm", "refund", false, "provider double-refunds")
		if err != nil || changed != want {
			t.Fatalf("press %d: changed %v, %v", i+1, changed, err)
		}
	}
	if tl, _ := GetTool(ctx, db.Read(), "crm", "refund"); tl.Enabled {
		t.Fatal("the tool is still on")
	}
	if r, err := OffReason(ctx, db.Read(), "crm", "refund"); err != nil || r != "provider double-refunds" {
		t.Errorf("OffReason = %q, %v", r, err)
	}
	if changed, err := SetToolEnabled(ctx, db, consoleAdmin, "crm", "refund", true, ""); err != nil || !changed {
		t.Fatalf("on: %v %v", changed, err)
	}
	off, on := consoleEvents(t, db, "mcp.tool_disable"), consoleEvents(t, db, "mcp.tool_enable")
	if len(off) != 1 || off[0].Details["reason"] != "provider double-refunds" || off[0].Subject != (audit.Subject{Type: "mcp_tool", ID: "crm/refund"}) || len(on) != 1 {
		t.Errorf("events: off %+v, on %+v", off, on)
	}
}

// Extra headers are sealed apart from the token, opened by
// withCredentials, named (never shown) by HeaderNames, and never audited
// with their values; reserved headers are refused.
func TestHeadersSealed(t *testing.T) {
	db, sealer := consoleRig(t)
	ctx := context.Background()
	if _, err := ParseHeaders("Authorization: Bearer x"); err == nil || !strings.Contains(err.Error(), "bearer token") {
		t.Errorf("Authorization: %v", err)
	}
	for _, bad := range []string{"mcp-session-id: 1", "Host: a", "content-type: x", "X-A: 1\nx-a: 2", "no colon", "Bad Name: 1", "X-Empty:"} {
		if _, err := ParseHeaders(bad); err == nil {
			t.Errorf("ParseHeaders(%q) accepted", bad)
		}
	}
	h, err := ParseHeaders("x-api-key: secret-header-value-1\r\n\r\nX-Tenant: shop ")
	if err != nil || len(h) != 2 || h["X-Api-Key"] != "secret-header-value-1" || h["X-Tenant"] != "shop" {
		t.Fatalf("ParseHeaders = %v, %v", h, err)
	}
	s, _ := Get(ctx, db.Read(), "crm")
	changed, err := Edit(ctx, db, sealer, consoleAdmin, s, Secrets{Headers: h})
	if err != nil || strings.Join(changed, ",") != "headers" {
		t.Fatalf("Edit = %v, %v", changed, err)
	}
	_, cred, err := withCredentials(ctx, db.Read(), sealer, "crm")
	if err != nil || cred.Token != "tok-1" || cred.Headers["X-Api-Key"] != "secret-header-value-1" {
		t.Fatalf("withCredentials = %+v, %v", cred, err)
	}
	if _, tok, err := withToken(ctx, db.Read(), sealer, "crm"); err != nil || tok != "tok-1" {
		t.Fatalf("withToken = %q, %v", tok, err)
	}
	if names, err := HeaderNames(ctx, db.Read(), sealer, "crm"); err != nil || strings.Join(names, ",") != "X-Api-Key,X-Tenant" {
		t.Errorf("HeaderNames = %v, %v", names, err)
	}
	var stored string
	db.Read().QueryRowContext(ctx, `SELECT headers_sealed FROM mcp_servers WHERE name = 'crm'`).Scan(&stored)
	if stored == "" || strings.Contains(stored, "secret-header") {
		t.Errorf("headers stored as %q", stored)
	}
	// Saving again without headers keeps them and records nothing.
	if changed, err := Edit(ctx, db, sealer, consoleAdmin, s, Secrets{}); err != nil || len(changed) != 0 {
		t.Errorf("a second save = %v, %v", changed, err)
	}
	evs := consoleEvents(t, db, "mcp.server_update")
	if len(evs) != 1 || strings.Contains(strings.Join([]string{evs[0].Hash, toJSON(evs[0].Details)}, ""), "secret-header") ||
		!strings.Contains(toJSON(evs[0].Details), "X-Api-Key") {
		t.Errorf("update events = %+v", evs)
	}
	// An empty map removes them.
	if changed, err := Edit(ctx, db, sealer, consoleAdmin, s, Secrets{Headers: map[string]string{}}); err != nil || len(changed) != 1 {
		t.Errorf("removing the headers = %v, %v", changed, err)
	}
	if _, cred, _ := withCredentials(ctx, db.Read(), sealer, "crm"); cred.Headers != nil {
		t.Errorf("headers after removal = %v", cred.Headers)
	}
}

func toJSON(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// The server's switch takes a reason when off, kept in its audit event.
func TestSwitchServerReason(t *testing.T) {
	db, _ := consoleRig(t)
	ctx := context.Background()
	if _, err := SwitchServer(ctx, db, consoleAdmin, "crm", false, ""); problem.From(err).Code != "reason_required" {
		t.Fatalf("off without a reason: %v", err)
	}
	if changed, err := SwitchServer(ctx, db, consoleAdmin, "crm", false, "leaks data"); err != nil || !changed {
		t.Fatalf("off: %v %v", changed, err)
	}
	if changed, err := SwitchServer(ctx, db, consoleAdmin, "crm", false, "again"); err != nil || changed {
		t.Fatalf("off again: %v %v", changed, err)
	}
	if r, _ := OffReason(ctx, db.Read(), "crm", ""); r != "leaks data" {
		t.Errorf("OffReason = %q", r)
	}
}

// CallsSince counts the mcp.call events of the window by server.
func TestCallsSince(t *testing.T) {
	db, _ := consoleRig(t)
	ctx := context.Background()
	for _, d := range []map[string]any{
		{"server": "crm", "outcome": "forwarded", "is_error": false},
		{"server": "crm", "outcome": "forwarded", "is_error": true},
		{"server": "crm", "outcome": "failed", "is_error": true},
		{"server": "crm", "outcome": "refused", "is_error": true},
		{"server": "erp", "outcome": "forwarded", "is_error": false},
	} {
		if err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorKey, ID: "k"}, Verb: "mcp.call",
				Subject: audit.Subject{Type: "mcp_tool", ID: d["server"].(string) + "/refund"}, Details: d})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	got, capped, err := CallsSince(ctx, db.Read(), time.Now().Add(-time.Hour))
	if err != nil || capped || got["crm"] != (Calls{Calls: 4, Errors: 2, Refused: 1}) || got["erp"] != (Calls{Calls: 1}) {
		t.Errorf("last hour = %+v (capped %v, %v)", got, capped, err)
	}
	if got, _, _ := CallsSince(ctx, db.Read(), time.Now().Add(time.Minute)); len(got) != 0 {
		t.Errorf("from a minute ahead = %+v", got)
	}
}
