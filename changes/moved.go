package changes

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
)

// objectNames name each kind's object in a sentence ("This key changed
// since..."); a test keeps one for every kind of the table.
var objectNames = map[string]string{
	DualControl: "dual-control threshold", DualControlWindow: "dual-control window", ToolRisk: "tool",
	ToolSwitch: "tool's kill switch", ToolTenantSwitch: "tool's kill switch for the tenant", SkillSwitch: "skill's kill switch",
	BudgetLimit: "budget", ModelUpstream: "model deployment", MCPServerSwitch: "MCP server's kill switch",
	MCPToolSwitch: "MCP tool's kill switch", TenantFreeze: "tenant", KeyRateLimit: "key", KeyScopes: "key",
	KeyRequestRate: "key", KeyExpiry: "key", ReleaseActivate: "environment's active release", OwnerChange: "object's owner",
	RunbookPublish: "runbook's published buttons", AlertRule: "alert rule", RouteAccuracy: "route accuracy alert",
	AllowHost: "list of allowed internal hosts",
}

// ObjectName is what a change of kind changes, in a sentence's words.
func ObjectName(kind string) string {
	if n, ok := objectNames[kind]; ok {
		return n
	}
	return "object"
}

// Moved says that a pending change's object is no longer in the change's
// before state: another admin, a tightening change or on-call edited it
// since the change was asked. Approving it would apply an after that was
// reviewed against a before that is no longer true (and undo the edit
// unseen), so a moved change can only be rejected or left to expire.
type Moved struct {
	Kind string
	Was  string // the before the change recorded, in the diff's words
	Now  string // the object's value now
}

// Sentence is Moved as the change page and the refusal say it.
func (m Moved) Sentence() string {
	return fmt.Sprintf("This %s changed since the change was asked: it was %s and is now %s. Reject this change and ask again.",
		ObjectName(m.Kind), m.Was, m.Now)
}

// Problem is the refusal of an approval of a moved change (409): nothing
// changes, and the change stays pending.
func (m Moved) Problem() error {
	return problem.Conflict("changed_since_asked", m.Sentence()).Titled("This change is out of date")
}

// MovedTo says how a change's object moved: from the change's before to
// now (the kind's JSON, built from the before with the fields the object
// holds overwritten), in the diff's words. The caller has compared them
// with the kind's own rule.
func MovedTo(c Change, now json.RawMessage) *Moved {
	var was, is []string
	for _, f := range Fields(c.Before, now) {
		if f.Before != f.After {
			was = append(was, f.Label+": "+orNone(f.Before))
			is = append(is, f.Label+": "+orNone(f.After))
		}
	}
	if len(was) == 0 {
		// Only what the diff leaves out moved (a whole definition).
		was, is = []string{"as the diff's before shows"}, []string{"different"}
	}
	return &Moved{Kind: c.Kind, Was: strings.Join(was, "; "), Now: strings.Join(is, "; ")}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Field is one setting of a change's value, before and after, as people
// read it: the change page's diff and the out-of-date sentence.
type Field struct {
	Key           string // the value's JSON name
	Label         string // the setting as the forms name it ("threshold", not "shown")
	Before, After string
}

// fieldLabels name the fields of the kinds' values (Threshold, KeyRate...)
// in the words of the forms that set them; a field without one is shown
// by its name.
var fieldLabels = map[string]string{
	"rpm": "requests a minute (0: no limit)", "tpm": "tokens a minute (0: no limit)", "on": "switched on",
	"hours": "window (hours)", "alert_percent": "alert at (% of the limit)", "base_url": "base URL",
	"upstream_key": "upstream key", "impact": "impact class", "hosts": "allowed internal hosts",
	"env": "environment", "digest": "release", "from": "from release", "surfaces": "surfaces changed",
	"by": "asked by", "failure_percent": "failure rate (%)", "p99_ms": "p99 latency (ms)",
	"window_minutes": "window (minutes)", "min_journeys": "minimum journeys",
	"accuracy_alert_below_percent": "route accuracy alert below (%)", "accuracy_alert_last_n": "over the last (labelled journeys)",
	"sample_percent": "daily sample (%)", "expires_at": "expires (UTC)",
}

// Fields lists the fields of a change's before and after values (the
// kind's JSON), in name order. What is only there to apply it (a whole
// tool or deployment definition, a sealed key, runbook buttons, owners)
// is left out, and where a value says how it reads (shown), its raw parts.
func Fields(before, after json.RawMessage) []Field {
	var b, a map[string]json.RawMessage
	_ = json.Unmarshal(before, &b)
	_ = json.Unmarshal(after, &a)
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []Field
	_, shown := a["shown"]
	for _, k := range keys {
		if k == "tool" || k == "deployment" || k == "buttons" || k == "owners" || k == "key_sealed" || (shown && (k == "minor" || k == "limit_micros" || k == "set" || k == "exists")) {
			continue
		}
		label, ok := fieldLabels[k]
		switch {
		case k == "shown" && a["currency"] != nil:
			label = "threshold (two approvers from)"
		case k == "shown":
			label = "limit"
		case !ok:
			label = strings.ReplaceAll(k, "_", " ")
		}
		out = append(out, Field{Key: k, Label: label, Before: fieldText(b[k]), After: fieldText(a[k])})
	}
	return out
}

func fieldText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "—"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, fmt.Sprint(e))
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	}
	return string(raw)
}

// Text is the threshold as people read it (Shown).
func (t Threshold) Text() string {
	switch {
	case !t.Set:
		return "none (two approvers for any amount)"
	case t.Minor == 0:
		return "0 (one approver for any amount)"
	}
	cur, err := money.ParseCurrency(t.Currency)
	if err != nil {
		return fmt.Sprintf("%d %s (minor units)", t.Minor, t.Currency)
	}
	return money.Format(money.Amount{Minor: t.Minor, Currency: cur})
}

// Text is the budget's limit as people read it (Shown).
func (b Budget) Text() string {
	if !b.Exists {
		return "no budget (nothing runs)"
	}
	return money.FormatMicros(b.LimitMicros, money.MustCurrency("USD")) + " a " + b.Period
}
