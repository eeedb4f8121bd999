package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tools"
)

var admin = audit.Actor{Type: audit.ActorPrincipal, ID: "admin-1"}

// lookup is a valid tool; setup stores it switched on.
var lookup = tools.Tool{Name: "lookup_order", Description: "Find an order", Impact: risk.ImpactLow, Reversibility: risk.Reversible,
	Provider: tools.ProviderBuiltin, Timeout: 2 * time.Second, MaxAttempts: 3, ApprovalTTL: time.Hour,
	ArgsSchema: json.RawMessage(`{"type":"object"}`), Enabled: true}

func setup(t *testing.T) *store.DB {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	if err := db.Transact(ctx, func(tx *store.Tx) error { return Upsert(ctx, tx, lookup) }); err != nil {
		t.Fatal(err)
	}
	return db
}

// newEvents returns the events recorded after the first skip, oldest first.
func newEvents(t *testing.T, db *store.DB, skip int) []audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(evs)
	return evs[skip:]
}

func countEvents(t *testing.T, db *store.DB) int { return len(newEvents(t, db, 0)) }

func detailsJSON(t *testing.T, d map[string]any) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func invalidFields(err error) []string {
	var inv *store.ValidationError
	if !errors.As(err, &inv) {
		return nil
	}
	var out []string
	for f := range inv.Fields {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// checkEvent asserts that evs is exactly one event of verb about tool
// name by admin, of no tenant, with details as JSON; or none when verb is
// "".
func checkEvent(t *testing.T, evs []audit.Event, verb, name, details string) {
	t.Helper()
	checkEventAbout(t, evs, verb, audit.Subject{Type: "tool", ID: name}, details)
}

// checkEventAbout is checkEvent for any subject.
func checkEventAbout(t *testing.T, evs []audit.Event, verb string, subject audit.Subject, details string) {
	t.Helper()
	if verb == "" {
		if len(evs) != 0 {
			t.Errorf("recorded %d events (first %s), want none", len(evs), evs[0].Verb)
		}
		return
	}
	if len(evs) != 1 {
		t.Fatalf("recorded %d events, want one %s", len(evs), verb)
	}
	ev := evs[0]
	if ev.Verb != verb || ev.Actor != admin || ev.Tenant != "" || ev.Subject != subject {
		t.Errorf("event = %s by %v, tenant %q, subject %v; want %s by %v, no tenant, subject %v",
			ev.Verb, ev.Actor, ev.Tenant, ev.Subject, verb, admin, subject)
	}
	if got := detailsJSON(t, ev.Details); got != details {
		t.Errorf("details = %s, want %s", got, details)
	}
}

var objectSchemaSHA = func() string {
	sum := sha256.Sum256([]byte(`{"type":"object"}`))
	return hex.EncodeToString(sum[:])
}()

func TestCreate(t *testing.T) {
	refund := tools.Tool{Name: "issue_refund", Impact: risk.ImpactHigh, Reversibility: risk.Compensatable, CompensatingTool: "lookup_order",
		Provider: tools.ProviderHTTP, WebhookURL: "https://pay.example.com/hook?token=s3cret", Timeout: 5 * time.Second, MaxAttempts: 2,
		ApprovalTTL: 24 * time.Hour, UnitCostMicros: 1500, ArgsSchema: json.RawMessage(`{ "type": "object" }`),
		AmountArg: "amount", CurrencyArg: "currency", TargetArg: "order_id"}
	badImpact := refund
	badImpact.Impact = "extreme"
	noCompensation := refund
	noCompensation.CompensatingTool = "undo_refund"
	taken := lookup
	taken.Description = "Another lookup"
	tests := []struct {
		name        string
		tool        tools.Tool
		wantErr     error    // errors.Is, or nil
		wantFields  []string // of a *store.ValidationError, or nil
		wantDetails string   // of the tool.create event; "" for none
	}{
		{name: "created; the webhook reduced to its host, the schema to its digest", tool: refund,
			wantDetails: `{"amount_arg":"amount","approval_ttl_s":86400,"args_schema_sha256":"` + objectSchemaSHA + `",` +
				`"compensating_tool":"lookup_order","currency_arg":"currency","enabled":false,"impact":"high","max_attempts":2,` +
				`"provider":"http","reversibility":"compensatable","target_arg":"order_id","timeout_ms":5000,"unit_cost_micros":1500,` +
				`"webhook_host":"pay.example.com"}`},
		{name: "name taken", tool: taken, wantErr: ErrExists},
		{name: "invalid", tool: badImpact, wantFields: []string{"impact"}},
		{name: "unknown compensating tool", tool: noCompensation, wantFields: []string{"compensating_tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := setup(t)
			before := countEvents(t, db)
			err := Create(ctx, db, admin, tt.tool)
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) || tt.wantErr == nil && tt.wantFields == nil && err != nil {
				t.Errorf("Create: %v, want %v", err, tt.wantErr)
			}
			if got := invalidFields(err); !slices.Equal(got, tt.wantFields) {
				t.Errorf("Create: %v: a *store.ValidationError on %v, want %v", err, got, tt.wantFields)
			}
			verb := ""
			if tt.wantDetails != "" {
				verb = "tool.create"
			}
			checkEvent(t, newEvents(t, db, before), verb, tt.tool.Name, tt.wantDetails)
			stored, err := Get(ctx, db.Read(), tt.tool.Name)
			switch {
			case tt.wantErr == ErrExists:
				if err != nil || stored.Description != lookup.Description {
					t.Errorf("stored = %+v, %v; want the existing tool untouched", stored, err)
				}
			case tt.wantDetails != "":
				if err != nil || stored.WebhookURL != tt.tool.WebhookURL || stored.Impact != tt.tool.Impact {
					t.Errorf("stored = %+v, %v; want the new tool", stored, err)
				}
			default:
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Get after a refused create = %+v, %v; want store.ErrNotFound", stored, err)
				}
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	edit := func(f func(*tools.Tool)) tools.Tool {
		t := lookup
		f(&t)
		return t
	}
	tests := []struct {
		name        string
		tool        tools.Tool
		wantChanged []string
		wantErr     error    // errors.Is, or nil
		wantFields  []string // of a *store.ValidationError, or nil
		wantDetails string   // of the tool.update event; "" for none
		wantStored  tools.Tool
	}{
		{name: "changed fields named", tool: edit(func(t *tools.Tool) { t.Description = "Look an order up"; t.MaxAttempts = 5 }),
			wantChanged: []string{"description", "max_attempts"},
			wantDetails: `{"approval_ttl_s":3600,"args_schema_sha256":"` + objectSchemaSHA + `","changed":["description","max_attempts"],` +
				`"impact":"low","max_attempts":5,"provider":"builtin","reversibility":"reversible","timeout_ms":2000,"unit_cost_micros":0}`,
			wantStored: edit(func(t *tools.Tool) { t.Description = "Look an order up"; t.MaxAttempts = 5 })},
		{name: "same definition, schema laid out differently", tool: edit(func(t *tools.Tool) { t.ArgsSchema = json.RawMessage("{\n  \"type\": \"object\"\n}") }),
			wantStored: lookup},
		{name: "the switch is not the form's to change", tool: edit(func(t *tools.Tool) { t.Enabled = false }), wantStored: lookup},
		{name: "the switch kept on a real change", tool: edit(func(t *tools.Tool) { t.Enabled = false; t.UnitCostMicros = 7 }),
			wantChanged: []string{"unit_cost"},
			wantDetails: `{"approval_ttl_s":3600,"args_schema_sha256":"` + objectSchemaSHA + `","changed":["unit_cost"],` +
				`"impact":"low","max_attempts":3,"provider":"builtin","reversibility":"reversible","timeout_ms":2000,"unit_cost_micros":7}`,
			wantStored: edit(func(t *tools.Tool) { t.UnitCostMicros = 7 })},
		{name: "invalid", tool: edit(func(t *tools.Tool) { t.Timeout = time.Millisecond }), wantFields: []string{"timeout"}, wantStored: lookup},
		{name: "unknown tool", tool: edit(func(t *tools.Tool) { t.Name = "no_such_tool" }), wantErr: store.ErrNotFound, wantStored: lookup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := setup(t)
			before := countEvents(t, db)
			changed, err := Update(ctx, db, admin, tt.tool)
			if !slices.Equal(changed, tt.wantChanged) {
				t.Errorf("Update changed %v, want %v", changed, tt.wantChanged)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) || tt.wantErr == nil && tt.wantFields == nil && err != nil {
				t.Errorf("Update: %v, want %v", err, tt.wantErr)
			}
			if got := invalidFields(err); !slices.Equal(got, tt.wantFields) {
				t.Errorf("Update: %v: a *store.ValidationError on %v, want %v", err, got, tt.wantFields)
			}
			verb := ""
			if tt.wantDetails != "" {
				verb = "tool.update"
			}
			checkEvent(t, newEvents(t, db, before), verb, tt.tool.Name, tt.wantDetails)
			stored, err := Get(ctx, db.Read(), lookup.Name)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes(stored, tt.wantStored)) != 0 || stored.Enabled != tt.wantStored.Enabled {
				t.Errorf("stored = %+v, want %+v", stored, tt.wantStored)
			}
		})
	}
}

func TestSwitch(t *testing.T) {
	tests := []struct {
		name        string
		offFirst    bool // switch lookup_order off before
		tool        string
		enable      bool
		wantChanged bool
		wantErr     error
		wantVerb    string
		wantEnabled bool // lookup_order afterwards
		reason      string
	}{
		{name: "off without a reason", tool: "lookup_order", wantErr: ErrSwitchReasonRequired, wantEnabled: true},
		{name: "off with a blank reason", tool: "lookup_order", reason: "  ", wantErr: ErrSwitchReasonRequired, wantEnabled: true},
		{name: "off with a reason", tool: "lookup_order", reason: "INC-7: orders API returns stale data", wantChanged: true, wantVerb: "tool.disable"},
		{name: "off again", offFirst: true, tool: "lookup_order", reason: "again"},
		{name: "on", offFirst: true, tool: "lookup_order", enable: true, wantChanged: true, wantVerb: "tool.enable", wantEnabled: true},
		{name: "on already", tool: "lookup_order", enable: true, wantEnabled: true},
		{name: "unknown tool", tool: "no_such_tool", reason: "x", wantErr: store.ErrNotFound, wantEnabled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := setup(t)
			if tt.offFirst {
				if _, err := Switch(ctx, db, admin, "lookup_order", false, "first press"); err != nil {
					t.Fatal(err)
				}
			}
			before := countEvents(t, db)
			changed, err := Switch(ctx, db, admin, tt.tool, tt.enable, tt.reason)
			if changed != tt.wantChanged || !errors.Is(err, tt.wantErr) {
				t.Errorf("Switch(%s, %v) = %v, %v; want %v, %v", tt.tool, tt.enable, changed, err, tt.wantChanged, tt.wantErr)
			}
			details := ""
			if tt.wantVerb != "" {
				details = `{"enabled":` + strconv.FormatBool(tt.enable) + `}`
				if tt.reason != "" {
					details = `{"enabled":` + strconv.FormatBool(tt.enable) + `,"reason":"` + tt.reason + `"}`
				}
			}
			checkEvent(t, newEvents(t, db, before), tt.wantVerb, tt.tool, details)
			if stored, err := Get(ctx, db.Read(), "lookup_order"); err != nil || stored.Enabled != tt.wantEnabled {
				t.Errorf("lookup_order enabled = %v, %v; want %v", stored.Enabled, err, tt.wantEnabled)
			}
			if tt.wantVerb == "tool.disable" {
				sw, err := SwitchOf(ctx, db.Read(), tt.tool)
				if err != nil || sw.Enabled || sw.Reason != tt.reason || sw.By != "principal:"+admin.ID || sw.At == nil {
					t.Errorf("SwitchOf(%s) = %+v, %v; want off with reason %q by %s", tt.tool, sw, err, tt.reason, admin.ID)
				}
			}
		})
	}
}
