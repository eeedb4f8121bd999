package catalog

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

func TestValidate(t *testing.T) {
	good := tools.Tool{Name: "issue_refund", Impact: risk.ImpactHigh, Reversibility: risk.Compensatable, CompensatingTool: "reverse_refund",
		Provider: tools.ProviderBuiltin, Timeout: time.Second, MaxAttempts: 3, ApprovalTTL: time.Hour, ArgsSchema: json.RawMessage(`{"type":"object"}`)}
	exists := func(n string) bool { return n == "reverse_refund" }
	tests := []struct {
		name   string
		mutate func(*tools.Tool)
		field  string
	}{
		{"valid", func(*tools.Tool) {}, ""},
		{"bad name", func(t *tools.Tool) { t.Name = "Issue Refund" }, "name"},
		{"bad impact", func(t *tools.Tool) { t.Impact = "extreme" }, "impact"},
		{"bad reversibility", func(t *tools.Tool) { t.Reversibility = "maybe"; t.CompensatingTool = "" }, "reversibility"},
		{"compensatable without tool", func(t *tools.Tool) { t.CompensatingTool = "" }, "compensating_tool"},
		{"unknown compensating tool", func(t *tools.Tool) { t.CompensatingTool = "undo" }, "compensating_tool"},
		{"compensates itself", func(t *tools.Tool) { t.CompensatingTool = "issue_refund" }, "compensating_tool"},
		{"irreversible with compensating tool", func(t *tools.Tool) { t.Reversibility = risk.Irreversible }, "compensating_tool"},
		{"http without URL", func(t *tools.Tool) { t.Provider = tools.ProviderHTTP }, "webhook_url"},
		{"bad provider", func(t *tools.Tool) { t.Provider = "ftp" }, "provider"},
		{"timeout too short", func(t *tools.Tool) { t.Timeout = time.Millisecond }, "timeout"},
		{"too many attempts", func(t *tools.Tool) { t.MaxAttempts = 11 }, "max_attempts"},
		{"ttl too long", func(t *tools.Tool) { t.ApprovalTTL = 60 * 24 * time.Hour }, "approval_ttl"},
		{"negative cost", func(t *tools.Tool) { t.UnitCostMicros = -1 }, "unit_cost"},
		{"bad schema", func(t *tools.Tool) { t.ArgsSchema = json.RawMessage(`{"type":7}`) }, "args_schema"},
	}
	for _, tt := range tests {
		tool := good
		tt.mutate(&tool)
		errs := Validate(tool, exists)
		if tt.field == "" && len(errs) != 0 || tt.field != "" && errs[tt.field] == "" {
			t.Errorf("%s: Validate = %v, want an error for %q", tt.name, errs, tt.field)
		}
	}
}
