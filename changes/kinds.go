package changes

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/risk"
)

// Kinds of governed change. Each names the object and the setting.
const (
	DualControl       = "tenant.dual_control"
	DualControlWindow = "tenant.dual_control_window"
	ToolRisk          = "tool.risk"
	ToolSwitch        = "tool.switch"
	ToolTenantSwitch  = "tool.tenant_switch"
	SkillSwitch       = "skill.switch"
	BudgetLimit       = "budget.limit"
	AllowHost         = "tenant.allow_host"
	ModelUpstream     = "model.upstream"
	MCPServerSwitch   = "mcp.server_switch"
	MCPToolSwitch     = "mcp.tool_switch"
	TenantFreeze      = "tenant.freeze"
	KeyRateLimit      = "key.rate_limit"
	KeyScopes         = "key.scopes"
	KeyRequestRate    = "key.request_rate"
	KeyExpiry         = "key.expiry"
	ReleaseActivate   = "release.activate"
	OwnerChange       = "owner"
	RunbookPublish    = "runbook.publish"
	AlertRule         = "alert.rule"
	RouteAccuracy     = "labels.route_accuracy_alert"
)

// Kind is one row of the classification table: which control-plane change
// it is, what makes it loosen (a second admin must approve) or tighten
// (applied at once), and how to tell from its before and after values.
type Kind struct {
	Name     string
	Object   string // what it changes, for people
	Loosens  string // when it loosens, in words
	Tightens string // when it tightens, in words
	// loosens reports whether going from before to after loosens the
	// control; values are the kind's JSON (the structs below).
	loosens func(before, after json.RawMessage) (bool, error)
}

// Table is the classification of control-plane changes by direction: the
// code reads it to decide, and docs/changes.md is rendered from it (a
// test keeps them the same).
var Table = []Kind{
	{DualControl, "a tenant's dual-control threshold in one currency",
		"raising it, setting one where the currency had none, or setting it to 0 (one approver for any amount)",
		"lowering it, or removing it (two approvers for any amount)", classify(thresholdLoosens)},
	{DualControlWindow, "the window over which amounts on one target add up for dual control",
		"shortening it (fewer amounts add up)", "lengthening it", classify(func(b, a Window) bool { return a.Hours < b.Hours })},
	{ToolRisk, "a tool's impact class and reversibility (the tool form)",
		"lowering the impact class (high → medium → low), or marking it more reversible (irreversible → compensatable → reversible)",
		"raising the impact class, marking it less reversible, or any other edit of the tool", classify(toolLoosens)},
	{ToolSwitch, "a tool's kill switch, for every tenant",
		"switching it back on", "switching it off", classify(func(b, a Switch) bool { return a.On && !b.On })},
	{ToolTenantSwitch, "a tool's kill switch for one tenant",
		"switching it back on", "switching it off", classify(func(b, a Switch) bool { return a.On && !b.On })},
	{SkillSwitch, "a skill's kill switch",
		"switching it back on", "switching it off", classify(func(b, a Switch) bool { return a.On && !b.On })},
	{BudgetLimit, "a tenant's budget",
		"creating one, raising its limit, changing its period, or raising its alert percentage",
		"lowering its limit or its alert percentage", classify(budgetLoosens)},
	{ModelUpstream, "where a model deployment sends prompts: its base URL and upstream API key",
		"changing the base URL or the upstream key", "any other edit of the deployment (applied at once)",
		classify(func(b, a Upstream) bool { return a.BaseURL != b.BaseURL || a.Key != b.Key })},
	{MCPServerSwitch, "an upstream MCP server's kill switch (every tool behind it)",
		"switching it back on", "switching it off", classify(func(b, a Switch) bool { return a.On && !b.On })},
	{MCPToolSwitch, "one MCP tool's own kill switch",
		"switching it back on", "switching it off", classify(func(b, a Switch) bool { return a.On && !b.On })},
	{TenantFreeze, "whether a tenant is frozen (its agents may act at all)",
		"unfreezing it", "freezing it", classify(func(b, a Frozen) bool { return b.Frozen && !a.Frozen })},
	{KeyRateLimit, "a virtual key's model rate limits (requests and tokens a minute; 0 is no limit)",
		"raising either limit, or removing one (0)", "lowering either, or setting one where there was none",
		classify(func(b, a KeyRate) bool { return perMinuteLooser(a.RPM, b.RPM) || perMinuteLooser(a.TPM, b.TPM) })},
	{KeyScopes, "a virtual key's scopes: the skills, tools, model aliases and MCP tools it may use, and `read:tenant`",
		"adding a scope the key did not have, unless a pattern it has covers it (`tool:lookup_*` → `tool:*` widens); a save that adds one scope and removes another waits as a whole",
		"removing scopes, or replacing a pattern by narrower scopes it covered (`tool:*` → `tool:lookup_order`)",
		classify(func(b, a KeyScopesValue) bool { return len(keys.Widening(b.Scopes, a.Scopes)) > 0 })},
	{KeyRequestRate, "a virtual key's request rate limit on the API (requests a minute and burst); a key has no budget of its own (its tenant's is `budget.limit`)",
		"raising either", "lowering either",
		classify(func(b, a KeyRequestRateValue) bool { return a.PerMinute > b.PerMinute || a.Burst > b.Burst })},
	{KeyExpiry, "a virtual key's expiry (the key stops working then; the API refuses it as expired)",
		"removing the expiry, or making it later (also bringing an expired key back)",
		"setting an expiry where there was none, or making it earlier (it must be in the future)",
		classify(func(b, a KeyExpiryValue) bool { return expiryLater(b, a) })},
	{ReleaseActivate, "which release an agent runs in an environment: activating a published release, rolling forward to a newer one, or promoting a canary to 100 %",
		"activating, rolling forward or promoting a release whose diff touches prompt, skills, routing, tools or approval policy",
		"rolling back to an earlier release, or a release whose diff touches only the model name",
		classify(func(b, a Release) bool { return a.Move != "rolled_back" && len(GovernedSurfaces(a.Surfaces)) > 0 })},
	{OwnerChange, "who owns a tool, a model deployment or a tenant (an e-mail or group:NAME)",
		"any change of owner (the owner is whose approval high-risk changes need)", "—",
		classify(func(b, a Owner) bool { return a.Owner != b.Owner })},
	{RunbookPublish, "which buttons of a runbook from the runbook directory (WARDEN_RUNBOOK_DIR) on-call may press: each button's label, tool and arguments as published",
		"publishing a button that is new, or whose label, tool or arguments changed in its file (until then it is held: shown, but refused)",
		"removing a button from the file (it is gone at once; nothing to publish)",
		classify(buttonsLoosen)},
	{AlertRule, "a skill's alert thresholds (Alerts → thresholds per skill): failure rate, p99 latency, window and minimum journeys",
		"raising the failure rate or the p99 latency, lengthening the window or raising the minimum journeys (the alert fires later, or never); a save that raises one and lowers another waits as a whole",
		"lowering any of them, none raised", classify(alertRuleLoosens)},
	{RouteAccuracy, "the route accuracy alert in the labelling settings (Labelling → settings): the accuracy it fires below and over how many labelled journeys",
		"lowering the accuracy it fires below, or counting more labelled journeys; a save that also changes the sample waits as a whole",
		"raising the accuracy, counting fewer journeys, or changing the daily sample alone",
		classify(func(b, a RouteAccuracyValue) bool {
			return a.AlertPercent < b.AlertPercent || a.AlertLastN > b.AlertLastN
		})},
	{AllowHost, "the internal hosts model deployments and MCP servers may reach (Models → allowed internal hosts)",
		"adding a host", "removing a host", classify(func(b, a Hosts) bool {
			for _, h := range a.Hosts {
				if !slices.Contains(b.Hosts, h) {
					return true
				}
			}
			return false
		})},
}

// Threshold is DualControl's value: Set false means the currency has no
// threshold (two approvers for any amount); Minor 0 means one approver
// for any amount.
type Threshold struct {
	Currency string `json:"currency"`
	Set      bool   `json:"set"`
	Minor    int64  `json:"minor"`
	// Shown is the threshold as people read it ("$1,000.00"), for the
	// diff; the rules read Set and Minor.
	Shown string `json:"shown,omitempty"`
}

// Window is DualControlWindow's value.
type Window struct {
	Hours int `json:"hours"`
}

// ToolRiskValue is ToolRisk's value: the risk fields the classification
// reads, and the whole tool as the form sent it (applied on approval).
type ToolRiskValue struct {
	Impact        risk.Impact        `json:"impact"`
	Reversibility risk.Reversibility `json:"reversibility"`
	Tool          json.RawMessage    `json:"tool,omitempty"`
}

// Switch is the value of the switches' kinds.
type Switch struct {
	On bool `json:"on"`
}

// KeyRate is KeyRateLimit's value: 0 is no limit.
type KeyRate struct {
	RPM int `json:"rpm"`
	TPM int `json:"tpm"`
}

// KeyScopesValue is KeyScopes' value: the key's scopes (sorted). The
// after value also says what the change adds and removes, for the diff;
// the classification reads Scopes only.
type KeyScopesValue struct {
	Scopes  []string `json:"scopes"`
	Adds    []string `json:"adds,omitempty"`
	Removes []string `json:"removes,omitempty"`
}

// KeyRequestRateValue is KeyRequestRate's value.
type KeyRequestRateValue struct {
	PerMinute int `json:"requests_a_minute"`
	Burst     int `json:"burst"`
}

// KeyExpiryValue is KeyExpiry's value: when the key stops working, in
// UTC as RFC 3339 ("2027-01-31T00:00:00Z"), or Never.
type KeyExpiryValue struct {
	ExpiresAt string `json:"expires_at"`
}

// Never is KeyExpiryValue's ExpiresAt of a key that does not expire.
const Never = "never"

// ExpiryValue is a key's expiry (nil: none) as KeyExpiry's value.
func ExpiryValue(t *time.Time) KeyExpiryValue {
	if t == nil {
		return KeyExpiryValue{ExpiresAt: Never}
	}
	return KeyExpiryValue{ExpiresAt: t.UTC().Format(time.RFC3339)}
}

// Time is the expiry v says (nil: none).
func (v KeyExpiryValue) Time() (*time.Time, error) {
	if v.ExpiresAt == Never || v.ExpiresAt == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("key expiry %q: %w", v.ExpiresAt, err)
	}
	return &t, nil
}

// expiryLater: the key works longer after than before (no expiry is
// forever). A value that does not parse is read as loosening, so it
// waits for a second admin rather than applying unseen.
func expiryLater(b, a KeyExpiryValue) bool {
	bt, berr := b.Time()
	at, aerr := a.Time()
	switch {
	case berr != nil || aerr != nil:
		return true
	case bt == nil:
		return false
	case at == nil:
		return true
	}
	return at.After(*bt)
}

// AlertRuleValue is AlertRule's value: a skill's thresholds as the form
// sets them.
type AlertRuleValue struct {
	Skill          string `json:"skill"`
	FailurePercent int    `json:"failure_percent"`
	P99Ms          int64  `json:"p99_ms"`
	WindowMinutes  int64  `json:"window_minutes"`
	MinJourneys    int    `json:"min_journeys"`
}

func alertRuleLoosens(b, a AlertRuleValue) bool {
	return a.FailurePercent > b.FailurePercent || a.P99Ms > b.P99Ms || a.WindowMinutes > b.WindowMinutes || a.MinJourneys > b.MinJourneys
}

// RouteAccuracyValue is RouteAccuracy's value: the labelling settings as
// a whole. The sample is no control (the classification does not read
// it), but a save changing it with the alert waits as a whole.
type RouteAccuracyValue struct {
	AlertPercent  int `json:"accuracy_alert_below_percent"`
	AlertLastN    int `json:"accuracy_alert_last_n"`
	SamplePercent int `json:"sample_percent"`
}

// perMinuteLooser reports whether limit a lets more through than b, 0
// being no limit.
func perMinuteLooser(a, b int) bool {
	switch {
	case b == 0:
		return false
	case a == 0:
		return true
	}
	return a > b
}

// Frozen is TenantFreeze's value.
type Frozen struct {
	Frozen bool `json:"frozen"`
}

// Budget is BudgetLimit's value; Exists false is no budget at all (nothing
// is admitted).
type Budget struct {
	Exists       bool   `json:"exists"`
	Period       string `json:"period"`
	LimitMicros  int64  `json:"limit_micros"`
	AlertPercent int    `json:"alert_percent"`
	Shown        string `json:"shown,omitempty"` // the limit as people read it, for the diff
}

// Upstream is ModelUpstream's value: the base URL, and the upstream key as
// people may see it ("stored", "a new key"). The after value carries the
// whole deployment and the new key sealed (KeySealed, never shown), which
// the approval applies.
type Upstream struct {
	BaseURL    string          `json:"base_url"`
	Key        string          `json:"upstream_key"`
	KeySealed  string          `json:"key_sealed,omitempty"`
	Deployment json.RawMessage `json:"deployment,omitempty"`
}

// Release is ReleaseActivate's value: before is the release active
// (Digest; "none" when none was), after the one asked for, how it moves
// (Move: "activated", "rolled_forward", "promoted"; "rolled_back" to an
// earlier release tightens) and the surfaces whose identifiers differ.
// Reason and By are the move's reason and the requester's name, as the
// release history keeps them when the change is applied.
type Release struct {
	Agent    string   `json:"agent"`
	Env      string   `json:"env"`
	Digest   string   `json:"digest"`
	From     string   `json:"from,omitempty"`
	Move     string   `json:"move,omitempty"`
	Surfaces []string `json:"surfaces,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	By       string   `json:"by,omitempty"`
	// Owners are the high-risk skills the move changes and their owners:
	// approving needs a second admin who is also each one's owner.
	Owners []SkillOwner `json:"owners,omitempty"`
}

// SkillOwner is a high-risk skill a release changes and who owns it (a
// person's e-mail or group:NAME, from its SKILL.md).
type SkillOwner struct {
	Skill string `json:"skill"`
	Owner string `json:"owner"`
}

// OwnersNeeded are the owners whose approval c needs besides a second
// admin's: the owners of the high-risk skills a release move changes.
func OwnersNeeded(c Change) []SkillOwner {
	if c.Kind != ReleaseActivate {
		return nil
	}
	a, err := Value[Release](c.After)
	if err != nil {
		return nil
	}
	return a.Owners
}

// releaseSurfaces are the surfaces whose change needs a second admin: what
// an agent says, may do and is routed to. The model's name alone does not.
var releaseSurfaces = []string{"prompt", "skills", "routing", "tools", "approval"}

// GovernedSurfaces keeps those of surfaces that make a release move a
// loosening change.
func GovernedSurfaces(surfaces []string) []string {
	var out []string
	for _, s := range surfaces {
		if slices.Contains(releaseSurfaces, s) {
			out = append(out, s)
		}
	}
	return out
}

// Owner is OwnerChange's value: the object (tool, model, tenant), its
// key (name or slug) and its owner.
type Owner struct {
	Object string `json:"object"`
	Key    string `json:"key"`
	Owner  string `json:"owner"`
}

// Buttons is RunbookPublish's value: a runbook's buttons, each with the
// digest of its definition (label, tool, arguments). Before is what is
// published; after what its file holds now.
type Buttons struct {
	Runbook string   `json:"runbook"`
	Buttons []Button `json:"buttons"`
}

// Button is one published (or to be published) runbook button.
type Button struct {
	ID     string            `json:"id"`
	Label  string            `json:"label"`
	Tool   string            `json:"tool"`
	Args   map[string]string `json:"args,omitempty"`
	Digest string            `json:"digest"`
}

// Find returns the button with id, or nil.
func (b Buttons) Find(id string) *Button {
	for i := range b.Buttons {
		if b.Buttons[i].ID == id {
			return &b.Buttons[i]
		}
	}
	return nil
}

// buttonsLoosen: a button after that was not published before with the
// same definition can now be pressed.
func buttonsLoosen(b, a Buttons) bool {
	for _, x := range a.Buttons {
		if was := b.Find(x.ID); was == nil || was.Digest != x.Digest {
			return true
		}
	}
	return false
}

// Hosts is AllowHost's value.
type Hosts struct {
	Hosts []string `json:"hosts"`
}

// effective is the amount from which two approvers are needed: no
// threshold is 0 (always two), 0 is never.
func (t Threshold) effective() (minor int64, never bool) {
	if !t.Set {
		return 0, false
	}
	if t.Minor == 0 {
		return 0, true
	}
	return t.Minor, false
}

func thresholdLoosens(b, a Threshold) bool {
	bm, bn := b.effective()
	am, an := a.effective()
	switch {
	case bn:
		return false
	case an:
		return true
	}
	return am > bm
}

var impactRank = map[risk.Impact]int{risk.ImpactLow: 0, risk.ImpactMedium: 1, risk.ImpactHigh: 2}
var reversibilityRank = map[risk.Reversibility]int{risk.Reversible: 0, risk.Compensatable: 1, risk.Irreversible: 2}

func toolLoosens(b, a ToolRiskValue) bool {
	return impactRank[a.Impact] < impactRank[b.Impact] || reversibilityRank[a.Reversibility] < reversibilityRank[b.Reversibility]
}

func budgetLoosens(b, a Budget) bool {
	if !a.Exists {
		return false
	}
	return !b.Exists || a.LimitMicros > b.LimitMicros || a.Period != b.Period || a.AlertPercent > b.AlertPercent
}

func classify[T any](f func(before, after T) bool) func(before, after json.RawMessage) (bool, error) {
	return func(before, after json.RawMessage) (bool, error) {
		var b, a T
		if err := json.Unmarshal(before, &b); err != nil {
			return false, fmt.Errorf("before: %w", err)
		}
		if err := json.Unmarshal(after, &a); err != nil {
			return false, fmt.Errorf("after: %w", err)
		}
		return f(b, a), nil
	}
}

// KindOf returns the table's row for name.
func KindOf(name string) (Kind, bool) {
	i := slices.IndexFunc(Table, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return Table[i], true
}

// Loosens reports whether changing kind from before to after loosens a
// control (needs a second admin); false tightens or keeps it (applied at
// once). An unknown kind is an error, never a silent "tightens".
func Loosens(kind string, before, after any) (bool, error) {
	k, ok := KindOf(kind)
	if !ok {
		return false, fmt.Errorf("unknown change kind %q", kind)
	}
	b, err := json.Marshal(before)
	if err != nil {
		return false, err
	}
	a, err := json.Marshal(after)
	if err != nil {
		return false, err
	}
	return k.loosens(b, a)
}

// Markdown renders Table as docs/changes.md shows them
// between its "table" markers.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| kind | what it changes | loosens (a second admin approves) | tightens (applies at once) |\n|---|---|---|---|\n")
	for _, k := range Table {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, k.Object, k.Loosens, k.Tightens)
	}
	return b.String()
}
