package alerts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// Faults: whose doing a failure is. The runbook an alert proposes depends
// on it: the agent's bad requests are fixed by whoever runs the agent, and
// switching anything off in Warden would only stop the requests that work.
const (
	FaultAgent  = "agent"  // the agent's requests: 4xx kinds such as incomplete_request, no_route
	FaultWarden = "warden" // Warden or a dependency: 5xx, a breaker open, a provider failing
)

// FaultWords says whose doing a fault is, for people.
func FaultWords(fault string) string {
	switch fault {
	case FaultAgent:
		return "the agent's requests"
	case FaultWarden:
		return "Warden or a dependency"
	}
	return "unknown"
}

// explanations are the failure codes journeys end with: a sentence for
// on-call, and whose doing it is. Codes a request can be refused with
// before it runs (4xx) are the agent's; a provider, a breaker, a model or
// Warden itself failing is Warden's side, and so is a switch someone in
// Warden turned off.
var explanations = map[string]struct{ sentence, fault string }{
	"incomplete_request":     {"The agent sent a request missing a required field, such as the order id.", FaultAgent},
	"no_route":               {"The agent asked for something no skill handles.", FaultAgent},
	"invalid_input":          {"The agent's request was malformed (bad JSON, a field of the wrong type, an empty input).", FaultAgent},
	"invalid_arguments":      {"A tool call's arguments did not match the tool's schema.", FaultAgent},
	"skill_not_in_scope":     {"The agent's key may not use this skill.", FaultAgent},
	"tool_not_in_scope":      {"The agent's key may not use a tool the skill needs.", FaultAgent},
	"tool_unknown":           {"The request needed a tool that is not in the catalog.", FaultAgent},
	"budget_exhausted":       {"The tenant's budget could not cover the request.", FaultAgent},
	"rate_limited":           {"The agent called faster than its key's rate limit.", FaultAgent},
	"idempotency_mismatch":   {"The agent reused an Idempotency-Key for a different request.", FaultAgent},
	"cancelled":              {"The agent went away before the journey finished.", FaultAgent},
	"tool_unavailable":       {"A tool's provider failed (timed out or answered errors) after every retry.", FaultWarden},
	"tool_refused":           {"A tool's provider refused the call for good.", FaultWarden},
	"dependency_unavailable": {"Warden did not call a tool: its breaker is open or its bulkhead is full after the provider failed.", FaultWarden},
	"model_unavailable":      {"The skill's model could not be called.", FaultWarden},
	"max_steps_exceeded":     {"The model asked for more tool calls than the skill allows.", FaultWarden},
	"tool_not_in_skill":      {"The model asked for a tool outside the skill's allow-list.", FaultWarden},
	"journey_timeout":        {"The journey ran out of time.", FaultWarden},
	"interrupted":            {"Warden stopped while the journey ran.", FaultWarden},
	"internal":               {"Warden failed internally; its logs say why.", FaultWarden},
	"tool_disabled":          {"A tool the journey needed is switched off in Warden.", FaultWarden},
	"skill_disabled":         {"The skill is switched off in Warden.", FaultWarden},
	"tenant_frozen":          {"The tenant is frozen in Warden.", FaultWarden},
}

// Explain says what a failure code means and whose doing it is. A code
// this list does not know reads as its words and counts as Warden's: an
// unexplained failure is not to be blamed on the caller.
func Explain(code string) (sentence, fault string) {
	if e, ok := explanations[code]; ok {
		return e.sentence, e.fault
	}
	if code == "" {
		return "The journey failed without an error code.", FaultWarden
	}
	w := strings.ReplaceAll(code, "_", " ")
	return strings.ToUpper(w[:1]) + w[1:] + ".", FaultWarden
}

// Cause is why a skill's alert fired: its failed journeys in the rule's
// window, counted by failure code, with the tools, tenants and keys they
// came from, most first.
type Cause struct {
	Skill        string
	Since, Until time.Time
	Journeys     int // journeys of the skill that ended in the window
	Failures     int // of which failed
	Codes        []CodeCount
	Fault        string // whose doing most failures are; "" with none
	Tools        []Count
	Tenants      []Count // by slug
	Keys         []KeyCount
	// SlowTools are a latency alert's tools, slowest step first.
	SlowTools []SlowTool
}

// CodeCount is one failure code in a cause.
type CodeCount struct {
	Code     string
	Count    int
	Sentence string
	Fault    string
}

// Count is how many failed journeys one tool or tenant had.
type Count struct {
	Name  string
	Count int
}

// KeyCount is how many failed journeys one key sent, with who created it
// (the agent's owner to contact).
type KeyCount struct {
	ID, Name, Tenant string
	CreatedBy        string // principal id
	Count            int
}

// SlowTool is a tool's slowest step in a latency alert's window.
type SlowTool struct {
	Name      string
	Calls     int
	MaxMillis int64
}

// AgentShare is the percentage of failures that are the agent's doing.
func (c Cause) AgentShare() int {
	if c.Failures == 0 {
		return 0
	}
	n := 0
	for _, cc := range c.Codes {
		if cc.Fault == FaultAgent {
			n += cc.Count
		}
	}
	return n * 100 / c.Failures
}

// causeTop bounds how many codes, tools, tenants and keys a cause lists.
const causeTop = 5

// CauseOf works out why a skill's alert fired (failure rate or p99
// latency): the skill's journeys that ended in the rule's window before
// the alert resolved (or now), limited to tenantIDs (nil: all). Other
// kinds of alert have no journeys to count: their cause is empty.
func CauseOf(ctx context.Context, q store.Querier, a Alert, tenantIDs []string, now time.Time) (Cause, error) {
	c := Cause{Skill: a.Subject}
	if a.Kind != FailureRate && a.Kind != P99Latency {
		return c, nil
	}
	rules, err := Rules(ctx, q)
	if err != nil {
		return c, err
	}
	c.Until = now.UTC()
	if a.Resolved != nil {
		c.Until = *a.Resolved
	}
	c.Since = c.Until.Add(-RuleFor(rules, a.Subject).Window)
	if tenantIDs != nil && len(tenantIDs) == 0 {
		return c, nil
	}
	scope, args := "", []any{a.Subject, store.FormatTime(c.Since), store.FormatTime(c.Until)}
	if tenantIDs != nil {
		scope = " AND j.tenant_id IN (?" + strings.Repeat(",?", len(tenantIDs)-1) + ")"
		for _, id := range tenantIDs {
			args = append(args, id)
		}
	}
	err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM journeys j WHERE j.skill = ? AND j.created_at >= ? AND j.created_at < ?
		AND j.status IN ('completed', 'failed')`+scope, args...).Scan(&c.Journeys)
	if err != nil {
		return c, fmt.Errorf("cause of alert %s: %w", a.ID, err)
	}
	// One row per failure code, tenant, key and failing tool: few, as
	// failures of one skill share them.
	type group struct {
		code, tenant, keyID, keyName, keyBy, tool string
		n                                         int
	}
	groups, err := store.Query(ctx, q, func(s store.Scanner) (group, error) {
		var g group
		err := s.Scan(&g.code, &g.tenant, &g.keyID, &g.keyName, &g.keyBy, &g.tool, &g.n)
		return g, err
	}, `SELECT f.error_code, f.slug, f.key_id, f.key_name, f.key_by, f.tool, COUNT(*) FROM (
			SELECT j.error_code, t.slug, j.key_id, COALESCE(k.name, '') AS key_name, COALESCE(k.created_by, '') AS key_by,
				COALESCE((SELECT s.tool FROM journey_steps s WHERE s.journey_id = j.id AND s.tool != ''
					AND s.status IN ('failed', 'refused') ORDER BY s.n DESC LIMIT 1), '') AS tool
			FROM journeys j JOIN tenants t ON t.id = j.tenant_id LEFT JOIN virtual_keys k ON k.id = j.key_id
			WHERE j.skill = ? AND j.created_at >= ? AND j.created_at < ? AND j.status = 'failed'`+scope+`
		) f GROUP BY f.error_code, f.slug, f.key_id, f.key_name, f.key_by, f.tool`, args...)
	if err != nil {
		return c, fmt.Errorf("cause of alert %s: %w", a.ID, err)
	}
	codes, tools, tenants := map[string]int{}, map[string]int{}, map[string]int{}
	keys := map[string]*KeyCount{}
	for _, g := range groups {
		c.Failures += g.n
		codes[g.code] += g.n
		tenants[g.tenant] += g.n
		if g.tool != "" {
			tools[g.tool] += g.n
		}
		if g.keyID != "" {
			k := keys[g.keyID]
			if k == nil {
				k = &KeyCount{ID: g.keyID, Name: g.keyName, Tenant: g.tenant, CreatedBy: g.keyBy}
				keys[g.keyID] = k
			}
			k.Count += g.n
		}
	}
	byFault := map[string]int{}
	for code, n := range codes {
		cc := CodeCount{Code: code, Count: n}
		cc.Sentence, cc.Fault = Explain(code)
		byFault[cc.Fault] += n
		c.Codes = append(c.Codes, cc)
	}
	slices.SortFunc(c.Codes, func(x, y CodeCount) int { return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Code, y.Code)) })
	c.Codes = c.Codes[:min(len(c.Codes), causeTop)]
	switch {
	case c.Failures == 0:
	case byFault[FaultAgent] > byFault[FaultWarden]:
		c.Fault = FaultAgent
	default:
		c.Fault = FaultWarden
	}
	c.Tools, c.Tenants = topCounts(tools), topCounts(tenants)
	for _, k := range keys {
		c.Keys = append(c.Keys, *k)
	}
	slices.SortFunc(c.Keys, func(x, y KeyCount) int { return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Name, y.Name)) })
	c.Keys = c.Keys[:min(len(c.Keys), causeTop)]
	if a.Kind == P99Latency {
		c.SlowTools, err = store.Query(ctx, q, func(s store.Scanner) (SlowTool, error) {
			var st SlowTool
			err := s.Scan(&st.Name, &st.Calls, &st.MaxMillis)
			return st, err
		}, `SELECT s.tool, COUNT(*), MAX(s.latency_ms) FROM journey_steps s JOIN journeys j ON j.id = s.journey_id
			WHERE j.skill = ? AND j.created_at >= ? AND j.created_at < ? AND j.status IN ('completed', 'failed')`+scope+` AND s.tool != ''
			GROUP BY s.tool ORDER BY MAX(s.latency_ms) DESC, s.tool LIMIT `+fmt.Sprint(causeTop), args...)
		if err != nil {
			return c, fmt.Errorf("slow tools of alert %s: %w", a.ID, err)
		}
	}
	return c, nil
}

func topCounts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for name, n := range m {
		out = append(out, Count{Name: name, Count: n})
	}
	slices.SortFunc(out, func(x, y Count) int { return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Name, y.Name)) })
	return out[:min(len(out), causeTop)]
}

// Params are what a runbook's actions are filled with for this alert:
// the skill it is about, the tool and tenant most of its failures came
// from (or, for a latency alert, its slowest tool), the key that sent
// most of them; a budget alert's tenant. A parameter with nothing to fill
// it is left out, and the actions that need it are not offered.
func (c Cause) Params(a Alert) map[string]string {
	p := map[string]string{"alert": a.ID}
	switch a.Kind {
	case FailureRate, P99Latency:
		p["skill"] = a.Subject
	case BudgetBurn:
		if a.Tenant != "" {
			p["tenant"] = a.Tenant
		}
	}
	if len(c.Tools) > 0 {
		p["tool"] = c.Tools[0].Name
	} else if len(c.SlowTools) > 0 {
		p["tool"] = c.SlowTools[0].Name
	}
	if len(c.Tenants) > 0 {
		p["tenant"] = c.Tenants[0].Name
	}
	if len(c.Keys) > 0 {
		p["key"] = c.Keys[0].ID
	}
	return p
}
