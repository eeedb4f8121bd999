package changes

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/risk"
)

func TestLoosens(t *testing.T) {
	th := func(set bool, minor int64) Threshold { return Threshold{Currency: "USD", Set: set, Minor: minor} }
	tool := func(i risk.Impact, r risk.Reversibility) ToolRiskValue {
		return ToolRiskValue{Impact: i, Reversibility: r}
	}
	budget := func(limit int64, period string, alert int) Budget {
		return Budget{Exists: true, Period: period, LimitMicros: limit, AlertPercent: alert}
	}
	sc := func(scopes ...string) KeyScopesValue { return KeyScopesValue{Scopes: scopes} }
	rate := func(perMin, burst int) KeyRequestRateValue {
		return KeyRequestRateValue{PerMinute: perMin, Burst: burst}
	}
	exp := func(at string) KeyExpiryValue {
		if at == "" {
			return ExpiryValue(nil)
		}
		t, _ := time.Parse(time.RFC3339, at)
		return ExpiryValue(&t)
	}
	rule := func(failure int, p99 int64, window int64, min int) AlertRuleValue {
		return AlertRuleValue{Skill: "refunds", FailurePercent: failure, P99Ms: p99, WindowMinutes: window, MinJourneys: min}
	}
	acc := func(below, lastN, sample int) RouteAccuracyValue {
		return RouteAccuracyValue{AlertPercent: below, AlertLastN: lastN, SamplePercent: sample}
	}
	btn := func(id, digest string) Button { return Button{ID: id, Label: id, Tool: "switch_tool", Digest: digest} }
	buttons := func(bs ...Button) Buttons { return Buttons{Runbook: "ops", Buttons: bs} }
	tests := []struct {
		name          string
		kind          string
		before, after any
		want          bool
	}{
		{"threshold raised", DualControl, th(true, 100_000), th(true, 100_000_000), true},
		{"threshold lowered", DualControl, th(true, 100_000), th(true, 50_000), false},
		{"threshold switched off (0)", DualControl, th(true, 100_000), th(true, 0), true},
		{"threshold set where none was", DualControl, th(false, 0), th(true, 100_000), true},
		{"threshold removed", DualControl, th(true, 100_000), th(false, 0), false},
		{"threshold from off to an amount", DualControl, th(true, 0), th(true, 100_000), false},
		{"window shortened", DualControlWindow, Window{24}, Window{1}, true},
		{"window lengthened", DualControlWindow, Window{24}, Window{48}, false},
		{"impact lowered", ToolRisk, tool(risk.ImpactHigh, risk.Irreversible), tool(risk.ImpactLow, risk.Irreversible), true},
		{"marked reversible", ToolRisk, tool(risk.ImpactHigh, risk.Compensatable), tool(risk.ImpactHigh, risk.Reversible), true},
		{"impact raised", ToolRisk, tool(risk.ImpactMedium, risk.Reversible), tool(risk.ImpactHigh, risk.Reversible), false},
		{"tool edited without risk change", ToolRisk, tool(risk.ImpactHigh, risk.Compensatable), tool(risk.ImpactHigh, risk.Compensatable), false},
		{"tool on", ToolSwitch, Switch{false}, Switch{true}, true},
		{"tool off", ToolSwitch, Switch{true}, Switch{false}, false},
		{"tool on for a tenant", ToolTenantSwitch, Switch{false}, Switch{true}, true},
		{"skill on", SkillSwitch, Switch{false}, Switch{true}, true},
		{"skill off", SkillSwitch, Switch{true}, Switch{false}, false},
		{"budget raised", BudgetLimit, budget(100, "month", 80), budget(200, "month", 80), true},
		{"budget lowered", BudgetLimit, budget(200, "month", 80), budget(100, "month", 80), false},
		{"budget period changed", BudgetLimit, budget(100, "day", 80), budget(100, "month", 80), true},
		{"budget alert raised", BudgetLimit, budget(100, "month", 80), budget(100, "month", 95), true},
		{"budget created", BudgetLimit, Budget{}, budget(100, "month", 80), true},
		{"host added", AllowHost, Hosts{[]string{"a.internal"}}, Hosts{[]string{"a.internal", "b.internal"}}, true},
		{"release activated touching routing", ReleaseActivate, Release{Digest: "a"}, Release{Digest: "b", Move: "activated", Surfaces: []string{"routing"}}, true},
		{"release rolled forward touching skills", ReleaseActivate, Release{Digest: "a"}, Release{Digest: "b", Move: "rolled_forward", Surfaces: []string{"model", "skills"}}, true},
		{"canary promoted touching prompt", ReleaseActivate, Release{Digest: "a"}, Release{Digest: "b", Move: "promoted", Surfaces: []string{"prompt"}}, true},
		{"release rolled back", ReleaseActivate, Release{Digest: "b"}, Release{Digest: "a", Move: "rolled_back", Surfaces: []string{"prompt", "tools"}}, false},
		{"release changing only the model", ReleaseActivate, Release{Digest: "a"}, Release{Digest: "b", Move: "activated", Surfaces: []string{"model"}}, false},
		{"scope added", KeyScopes, sc("tool:lookup_order"), sc("tool:issue_refund", "tool:lookup_order"), true},
		{"scope removed", KeyScopes, sc("read:tenant", "tool:lookup_order"), sc("tool:lookup_order"), false},
		{"scopes unchanged", KeyScopes, sc("skill:refunds", "tool:lookup_order"), sc("skill:refunds", "tool:lookup_order"), false},
		{"name replaced by a pattern", KeyScopes, sc("tool:refund"), sc("tool:*"), true},
		{"pattern replaced by a wider one", KeyScopes, sc("tool:lookup_*"), sc("tool:*"), true},
		{"pattern replaced by a narrower one", KeyScopes, sc("tool:*"), sc("tool:lookup_*"), false},
		{"pattern replaced by a name it covers", KeyScopes, sc("model:gpt-*"), sc("model:gpt-4o"), false},
		{"pattern of another kind", KeyScopes, sc("tool:*"), sc("skill:refunds"), true},
		{"one scope swapped for another", KeyScopes, sc("tool:a", "tool:b"), sc("tool:a", "tool:c"), true},
		{"read:tenant added", KeyScopes, sc("tool:*"), sc("read:tenant", "tool:*"), true},
		{"MCP tool added under an MCP pattern", KeyScopes, sc("mcp:crm/*"), sc("mcp:crm/*", "mcp:crm/lookup"), false},
		{"MCP pattern over every server", KeyScopes, sc("mcp:crm/*"), sc("mcp:*"), true},
		{"request rate raised", KeyRequestRate, rate(600, 60), rate(1200, 60), true},
		{"burst raised", KeyRequestRate, rate(600, 60), rate(300, 100), true},
		{"request rate lowered", KeyRequestRate, rate(600, 60), rate(60, 10), false},
		{"request rate unchanged", KeyRequestRate, rate(600, 60), rate(600, 60), false},
		{"expiry set where none was", KeyExpiry, exp(""), exp("2027-01-31T00:00:00Z"), false},
		{"expiry made earlier", KeyExpiry, exp("2027-01-31T00:00:00Z"), exp("2027-01-01T00:00:00Z"), false},
		{"expiry made later", KeyExpiry, exp("2027-01-31T00:00:00Z"), exp("2027-02-01T00:00:00Z"), true},
		{"expiry removed", KeyExpiry, exp("2027-01-31T00:00:00Z"), exp(""), true},
		{"expiry unchanged", KeyExpiry, exp("2027-01-31T00:00:00Z"), exp("2027-01-31T00:00:00Z"), false},
		{"still no expiry", KeyExpiry, exp(""), exp(""), false},
		{"expiry unreadable", KeyExpiry, exp("2027-01-31T00:00:00Z"), KeyExpiryValue{ExpiresAt: "soon"}, true},
		{"button added", RunbookPublish, buttons(btn("off", "d1")), buttons(btn("off", "d1"), btn("on", "d2")), true},
		{"button changed", RunbookPublish, buttons(btn("off", "d1")), buttons(btn("off", "d9")), true},
		{"first buttons published", RunbookPublish, buttons(), buttons(btn("off", "d1")), true},
		{"button removed", RunbookPublish, buttons(btn("off", "d1"), btn("on", "d2")), buttons(btn("off", "d1")), false},
		{"buttons unchanged", RunbookPublish, buttons(btn("off", "d1")), buttons(btn("off", "d1")), false},
		{"failure threshold raised", AlertRule, rule(20, 10000, 15, 20), rule(50, 10000, 15, 20), true},
		{"p99 threshold raised", AlertRule, rule(20, 10000, 15, 20), rule(20, 30000, 15, 20), true},
		{"alert window lengthened", AlertRule, rule(20, 10000, 15, 20), rule(20, 10000, 60, 20), true},
		{"minimum journeys raised", AlertRule, rule(20, 10000, 15, 20), rule(20, 10000, 15, 200), true},
		{"failure lowered, window lengthened", AlertRule, rule(20, 10000, 15, 20), rule(10, 10000, 30, 20), true},
		{"alert thresholds lowered", AlertRule, rule(20, 10000, 15, 20), rule(10, 2500, 5, 5), false},
		{"alert thresholds unchanged", AlertRule, rule(20, 10000, 15, 20), rule(20, 10000, 15, 20), false},
		{"accuracy alert lowered", RouteAccuracy, acc(80, 50, 5), acc(60, 50, 5), true},
		{"accuracy counted over more labels", RouteAccuracy, acc(80, 50, 5), acc(80, 500, 5), true},
		{"accuracy lowered with the sample", RouteAccuracy, acc(80, 50, 5), acc(60, 50, 100), true},
		{"accuracy alert raised", RouteAccuracy, acc(80, 50, 5), acc(90, 30, 5), false},
		{"sample alone", RouteAccuracy, acc(80, 50, 5), acc(80, 50, 100), false},
		{"host removed", AllowHost, Hosts{[]string{"a.internal", "b.internal"}}, Hosts{[]string{"a.internal"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Loosens(tt.kind, tt.before, tt.after)
			if err != nil || got != tt.want {
				t.Errorf("Loosens(%s, %+v, %+v) = %v, %v; want %v", tt.kind, tt.before, tt.after, got, err, tt.want)
			}
		})
	}
	if _, err := Loosens("tool.nonsense", Switch{}, Switch{}); err == nil {
		t.Error("Loosens(unknown kind) = nil error, want one")
	}
	if _, err := Table[0].loosens(json.RawMessage(`{`), json.RawMessage(`{}`)); err == nil {
		t.Error("a kind's classifier accepted broken JSON")
	}
}
