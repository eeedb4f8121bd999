package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/risk"
)

func TestAdminToolSwitchOffAndOn(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()

	list := b.get("/tools")
	if got := text(list, "tool-switch-lookup_order"); !strings.Contains(got, "on") {
		t.Fatalf("lookup_order switch shows %q, want on", got)
	}
	href, ok := list.Doc.Find(`[data-testid="tool-switch-lookup_order"] a`).Attr("href")
	if !ok || href != "/tools/lookup_order/disable" {
		t.Fatalf("switch-off link = %q", href)
	}
	confirm := b.get(href)
	if got := text(confirm, "confirm-effect"); !strings.Contains(got, "lookup_order") || !strings.Contains(got, "403 tool_disabled") {
		t.Errorf("confirmation says %q, want the effect on journeys", got)
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order"); !tl.Enabled {
		t.Fatal("opening the confirmation switched the tool off")
	}

	// A reason is required: without one the confirmation comes back and
	// nothing changes or is recorded.
	before := auditCount(t, in.DB)
	p := b.post("/tools/lookup_order/disable", b.withCSRF(nil), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-reason") == "" || auditCount(t, in.DB) != before {
		t.Fatalf("switch off without a reason = %d (error %q), %d events; want 422 and nothing recorded", p.Status, text(p, "error-reason"), auditCount(t, in.DB)-before)
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order"); !tl.Enabled {
		t.Fatal("switching off without a reason switched the tool off")
	}
	p = b.post("/tools/lookup_order/disable", b.withCSRF(url.Values{"reason": {"INC-7: orders API stale"}}), nil)
	if got := text(p, "tool-off-reason-lookup_order"); got != "INC-7: orders API stale" {
		t.Errorf("Tools page shows reason %q, want the one typed", got)
	}
	if p.URL.Path != "/tools" || !strings.Contains(text(p, "tool-switch-lookup_order"), "off") {
		t.Fatalf("after switching off at %s, switch shows %q", p.URL, text(p, "tool-switch-lookup_order"))
	}
	if tl, err := catalog.Get(ctx, in.DB.Read(), "lookup_order"); err != nil || tl.Enabled {
		t.Fatalf("catalog says enabled=%v (%v), want false", tl.Enabled, err)
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); !tl.Enabled {
		t.Error("switching lookup_order off switched issue_refund off too")
	}
	evs := adminEvents(t, in.DB, "tool.disable")
	if len(evs) != 1 || evs[0].Subject.Type != "tool" || evs[0].Subject.ID != "lookup_order" || evs[0].Actor.Type != "principal" {
		t.Fatalf("tool.disable events = %+v, want one for lookup_order by a principal", evs)
	}
	if r, _ := evs[0].Details["reason"].(string); r != "INC-7: orders API stale" {
		t.Errorf("tool.disable reason = %q, want the one typed", r)
	}
	before = auditCount(t, in.DB)
	p = b.post("/tools/lookup_order/disable", b.withCSRF(url.Values{"reason": {"again"}}), nil)
	if !strings.Contains(text(p, "notice"), "already off") || auditCount(t, in.DB) != before {
		t.Errorf("second switch-off: notice %q, %d new events", text(p, "notice"), auditCount(t, in.DB)-before)
	}

	// One click to switch it back on.
	action, _ := p.Doc.Find(`[data-testid="tool-switch-lookup_order"] form`).Attr("action")
	if action != "/tools/lookup_order/enable" {
		t.Fatalf("switch-on form posts to %q", action)
	}
	// Switching on loosens: it waits for frank.
	approveAsFrank(t, in, b.post(action, b.withCSRF(nil), nil))
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order"); !tl.Enabled {
		t.Error("the tool is still off after switching on")
	}
	if evs := adminEvents(t, in.DB, "tool.enable"); len(evs) != 1 {
		t.Errorf("tool.enable events = %d, want 1", len(evs))
	}
	if got := b.post("/tools/no_such_tool/disable", b.withCSRF(url.Values{"reason": {"x"}}), nil); got.Status != http.StatusNotFound {
		t.Errorf("switching an unknown tool = %d, want 404", got.Status)
	}
}

// toolForm is a valid edit form for lookup_order, as the page fills it.
func toolFormValues() url.Values {
	return url.Values{
		"description": {"Find an order"}, "impact": {"low"}, "reversibility": {"reversible"}, "compensating_tool": {""},
		"provider": {"builtin"}, "webhook_url": {""}, "timeout": {"5000"}, "max_attempts": {"3"},
		"args_schema": {`{"type":"object"}`}, "approval_ttl": {"86400"}, "unit_cost": {"0.00"},
	}
}

func TestAdminToolEditValidatesAndAudits(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()

	edit := b.get("/tools/lookup_order/edit")
	for field, want := range map[string]string{"timeout": "5000", "max_attempts": "3", "approval_ttl": "86400", "unit_cost": "0.00"} {
		if v, _ := edit.Doc.Find(`input[name="` + field + `"]`).Attr("value"); v != want {
			t.Errorf("edit form %s = %q, want %q", field, v, want)
		}
	}
	if got := edit.Doc.Find(`textarea[name="args_schema"]`).Text(); got != "{\n  \"type\": \"object\"\n}" {
		t.Errorf("schema textarea = %q", got)
	}

	// Saving the form as shown changes nothing.
	before := auditCount(t, in.DB)
	p := b.post("/tools/lookup_order", b.withCSRF(toolFormValues()), nil)
	if !strings.Contains(text(p, "notice"), "nothing changed") || auditCount(t, in.DB) != before {
		t.Errorf("unchanged save: notice %q, %d events", text(p, "notice"), auditCount(t, in.DB)-before)
	}

	tests := []struct {
		field, value, want string
	}{
		{"args_schema", `{"type": 12}`, "not a valid JSON Schema"},
		{"args_schema", `{not json`, "not a valid JSON Schema"},
		{"args_schema", ``, "Enter a JSON Schema"},
		{"impact", "extreme", "Choose low, medium or high"},
		{"provider", "http", "webhook URL"},
		{"timeout", "1", "between 10 ms and 5 minutes"},
		{"timeout", "fast", "whole number of milliseconds"},
		{"max_attempts", "0", "between 1 and 10"},
		{"approval_ttl", "30", "between 1 minute and 30 days"},
		{"unit_cost", "-0.01", "cannot be negative"},
		{"reversibility", "compensatable", "names the tool that undoes it"},
	}
	for _, tt := range tests {
		form := toolFormValues()
		form.Set(tt.field, tt.value)
		p := b.post("/tools/lookup_order", b.withCSRF(form), nil)
		field := tt.field
		if tt.field == "provider" {
			field = "webhook_url"
		}
		if tt.field == "reversibility" {
			field = "compensating_tool"
		}
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-"+field), tt.want) {
			t.Errorf("%s=%q: status %d, error on %s %q; want 422 with %q", tt.field, tt.value, p.Status, field, text(p, "error-"+field), tt.want)
		}
		if tt.field == "args_schema" {
			if got := p.Doc.Find(`textarea[name="args_schema"]`).Text(); got != tt.value {
				t.Errorf("schema textarea after error = %q, want the typed %q", got, tt.value)
			}
		}
	}
	tl, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order")
	if string(tl.ArgsSchema) != `{"type":"object"}` || tl.Impact != risk.ImpactLow || tl.Timeout != 5*time.Second || auditCount(t, in.DB) != before {
		t.Errorf("after refused saves tool = %+v, %d new events; want unchanged", tl, auditCount(t, in.DB)-before)
	}

	// A real change: an http tool with a webhook carrying a token.
	form := toolFormValues()
	form.Set("provider", "http")
	form.Set("webhook_url", "https://hooks.example.com/orders?token=s3cr3t-token")
	form.Set("unit_cost", "0.002")
	form.Set("args_schema", `{"type":"object","required":["order_id"]}`)
	p = b.post("/tools/lookup_order", b.withCSRF(form), nil)
	if p.URL.Path != "/tools" || !strings.Contains(text(p, "notice"), "saved") {
		t.Fatalf("save ended at %s, notice %q, errors %q", p.URL, text(p, "notice"), text(p, "form-errors"))
	}
	tl, _ = catalog.Get(ctx, in.DB.Read(), "lookup_order")
	if tl.Provider != "http" || tl.UnitCostMicros != 2_000 || !tl.Enabled || !strings.Contains(string(tl.ArgsSchema), "order_id") {
		t.Errorf("saved tool = %+v", tl)
	}
	evs := adminEvents(t, in.DB, "tool.update")
	if len(evs) != 1 {
		t.Fatalf("tool.update events = %d, want 1", len(evs))
	}
	d := fmt.Sprint(evs[0].Details)
	if strings.Contains(d, "s3cr3t") || !strings.Contains(d, "hooks.example.com") {
		t.Errorf("tool.update details = %s, want the webhook host without its token", d)
	}
	if got := fmt.Sprint(evs[0].Details["changed"]); got != "[provider webhook_url args_schema unit_cost]" {
		t.Errorf("changed fields = %s", got)
	}
}

func TestAdminToolCreate(t *testing.T) {
	in, b := adminSession(t, "erin")
	form := toolFormValues()
	form.Set("name", "cancel_refund")
	form.Set("impact", "medium")
	form.Set("enabled", "1")
	p := b.post("/tools", b.withCSRF(form), nil)
	if p.URL.Path != "/tools" || p.Doc.Find(`[data-testid="tool-cancel_refund"]`).Length() != 1 {
		t.Fatalf("create ended at %s (%d): %s", p.URL, p.Status, text(p, "form-errors"))
	}
	tl, err := catalog.Get(context.Background(), in.DB.Read(), "cancel_refund")
	if err != nil || tl.Impact != risk.ImpactMedium || !tl.Enabled {
		t.Errorf("created tool = %+v, %v", tl, err)
	}
	if evs := adminEvents(t, in.DB, "tool.create"); len(evs) != 1 || evs[0].Subject.ID != "cancel_refund" {
		t.Errorf("tool.create events = %+v", evs)
	}
	before := auditCount(t, in.DB)
	for name, want := range map[string]string{"cancel_refund": "already a tool", "Bad Name": "lower-case letters", "": "lower-case letters"} {
		form.Set("name", name)
		p := b.post("/tools", b.withCSRF(form), nil)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-name"), want) {
			t.Errorf("name %q: status %d, error %q; want 422 with %q", name, p.Status, text(p, "error-name"), want)
		}
		if v, _ := p.Doc.Find(`input[name="name"]`).Attr("value"); v != name {
			t.Errorf("name %q: input shows %q", name, v)
		}
	}
	if auditCount(t, in.DB) != before {
		t.Error("refused creates were audited")
	}
}
