package runbooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/tenants"
)

// Operational tools an action may name. Each is one existing domain entry
// point; a runbook adds the who, why and once-only around it.
const (
	ToolRollbackRelease  = "rollback_release"  // args: agent, env; optional digest (default: the previous release)
	ToolSwitchTool       = "switch_tool"       // args: name, state (off|on); optional tenant (slug): that tenant only
	ToolSwitchSkill      = "switch_skill"      // args: name, state (off|on)
	ToolFreezeTenant     = "freeze_tenant"     // args: tenant (slug)
	ToolUnfreezeTenant   = "unfreeze_tenant"   // args: tenant (slug)
	ToolRevokeKey        = "revoke_key"        // args: key (id)
	ToolReconcileEffects = "reconcile_effects" // no args
	ToolSetBudgetLimit   = "set_budget_limit"  // args: tenant (slug), limit (currency units, e.g. 250.00)
	ToolExpirePending    = "expire_pending"    // args: tenant (slug); optional tool
	ToolPurgeTraces      = "purge_traces"      // args: tenant (slug), from, to (see parseWhen); needs approval
	ToolRetryFailed      = "retry_failed"      // args: tenant (slug), tool; needs approval when the tool's impact is high
	ToolSwitchMCPServer  = "switch_mcp_server" // args: server, state (off|on)
	ToolSwitchMCPTool    = "switch_mcp_tool"   // args: server, tool (as the server names it), state (off|on)
)

// limitUnits reads a budget limit as typed in a runbook: currency units
// with up to six decimals, kept as micro-units like every budget.
var limitUnits = money.Currency{Code: "USD", Exponent: 6}

// toolArgs lists each tool's required and optional arguments.
var toolArgs = map[string]struct{ required, optional []string }{
	ToolRollbackRelease:  {[]string{"agent", "env"}, []string{"digest"}},
	ToolSwitchTool:       {[]string{"name", "state"}, []string{"tenant"}},
	ToolSwitchSkill:      {[]string{"name", "state"}, nil},
	ToolFreezeTenant:     {[]string{"tenant"}, nil},
	ToolUnfreezeTenant:   {[]string{"tenant"}, nil},
	ToolRevokeKey:        {[]string{"key"}, nil},
	ToolReconcileEffects: {nil, nil},
	ToolSetBudgetLimit:   {[]string{"tenant", "limit"}, nil},
	ToolExpirePending:    {[]string{"tenant"}, []string{"tool"}},
	ToolPurgeTraces:      {[]string{"tenant", "from", "to"}, nil},
	ToolRetryFailed:      {[]string{"tenant", "tool"}, nil},
	ToolSwitchMCPServer:  {[]string{"server", "state"}, nil},
	ToolSwitchMCPTool:    {[]string{"server", "tool", "state"}, nil},
}

// Tools names the operational tools, sorted.
func Tools() []string {
	out := make([]string, 0, len(toolArgs))
	for t := range toolArgs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func checkArgs(tool string, args map[string]string) error {
	spec, ok := toolArgs[tool]
	if !ok {
		return fmt.Errorf("tool %q is not one of %s", tool, strings.Join(Tools(), ", "))
	}
	var errs []error
	for _, a := range spec.required {
		if strings.TrimSpace(args[a]) == "" {
			errs = append(errs, fmt.Errorf("tool %s needs the argument %q", tool, a))
		}
	}
	for a := range args {
		if !slices.Contains(spec.required, a) && !slices.Contains(spec.optional, a) {
			errs = append(errs, fmt.Errorf("tool %s takes no argument %q", tool, a))
		}
	}
	for k, v := range args {
		if p := param(v); p != "" && !slices.Contains(Parameters, p) {
			errs = append(errs, fmt.Errorf("argument %q: %q names no parameter (%s)", k, v, "$"+strings.Join(Parameters, ", $")))
		}
	}
	if s, ok := args["state"]; ok && s != "off" && s != "on" {
		errs = append(errs, fmt.Errorf("state %q is neither off nor on", s))
	}
	for _, k := range []string{"from", "to"} {
		if v, ok := args[k]; ok && param(v) == "" {
			if _, err := parseWhen(v, time.Now()); err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", k, v, err))
			}
		}
	}
	if l, ok := args["limit"]; ok && param(l) == "" {
		if _, err := money.ParseDecimal(l, limitUnits); err != nil {
			errs = append(errs, fmt.Errorf("limit %q: %w", l, err))
		}
	}
	return errors.Join(errs...)
}

// Runtime is what some tools need of the agent runtime.
type Runtime interface {
	Reconcile(ctx context.Context) (ledger.Report, error)
	SkillNames(ctx context.Context) ([]string, error)
	// ExpirePending expires the given pending actions now, ending the
	// journeys that waited for them; it returns how many expired.
	ExpirePending(ctx context.Context, ids []string, actor audit.Actor, reason string) (int, error)
	// RetryFailed executes again, inside tx, the tenant's failed actions
	// of tool that never reached the provider, under their own keys.
	RetryFailed(ctx context.Context, tx *store.Tx, tenantID, tool, batch string, actor audit.Actor, reason string) (execution.RetryReport, error)
}

// Services is the Runtime made of Warden's two runtime services: the
// skills journeys route to, and the execution of actions.
type Services struct {
	Journeys interface {
		SkillNames(ctx context.Context) ([]string, error)
	}
	Execution interface {
		Reconcile(ctx context.Context) (ledger.Report, error)
		ExpirePending(ctx context.Context, ids []string, actor audit.Actor, reason string) (int, error)
		RetryFailed(ctx context.Context, tx *store.Tx, tenantID, tool, batch string, actor audit.Actor, reason string) (execution.RetryReport, error)
	}
}

func (s Services) SkillNames(ctx context.Context) ([]string, error) {
	return s.Journeys.SkillNames(ctx)
}
func (s Services) Reconcile(ctx context.Context) (ledger.Report, error) {
	return s.Execution.Reconcile(ctx)
}
func (s Services) ExpirePending(ctx context.Context, ids []string, actor audit.Actor, reason string) (int, error) {
	return s.Execution.ExpirePending(ctx, ids, actor, reason)
}
func (s Services) RetryFailed(ctx context.Context, tx *store.Tx, tenantID, tool, batch string, actor audit.Actor, reason string) (execution.RetryReport, error) {
	return s.Execution.RetryFailed(ctx, tx, tenantID, tool, batch, actor, reason)
}

// parseWhen reads a time argument: an RFC 3339 time, a date (midnight
// UTC), "now", or a duration before now ("-168h"). Relative ones are
// fixed when the button is pressed.
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "now" {
		return now.UTC(), nil
	}
	if strings.HasPrefix(s, "-") {
		d, err := time.ParseDuration(s[1:])
		if err != nil || d <= 0 {
			return time.Time{}, errors.New(`write a duration before now such as "-24h"`)
		}
		return now.Add(-d).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New(`write a time as 2026-11-30, 2026-11-30T12:00:00Z, "now" or "-24h"`)
}

// Deps are what running an action needs.
type Deps struct {
	DB       *store.DB
	Runbooks *Set
	// Sealer seals the arguments of the approval request a high-impact
	// tool's press creates; without it those tools are refused.
	Sealer  approvals.Sealer
	Runtime Runtime // nil in a console-only Warden: switch_skill and reconcile_effects are refused
}

// Plan says exactly what pressing an action will change, for the
// confirmation page, and what Run checks the principal against.
type Plan struct {
	Tool    string
	Summary string // one sentence: what changes
	// Tenant is the tenant slug the tool changes; empty when it reaches
	// every tenant (then the principal needs a scope of all tenants).
	Tenant string
	// NoChange is true when the target is already as the action leaves it:
	// confirming records the press and changes nothing.
	NoChange bool
	// WaitsForAdmin is true for a button that loosens a control
	// (docs/changes.md): pressing asks for a pending change.
	WaitsForAdmin bool
	// NeedsApproval is true for a high-impact tool: pressing asks someone
	// other than the presser to approve it, and it runs on approval.
	NeedsApproval bool
	// Since and Until are a purge's range, fixed at the press.
	Since, Until time.Time
	// run is the run being pressed: a retry's batch.
	run string
	// alert is the alert the runbook was opened from, for the run's event.
	alert string
	// A rollback's pointer move and what differs between the two bundles.
	Agent, Env, From, To string
	Diff                 []string
}

var errNoRuntime = problem.Unprocessable("no_runtime", "This Warden runs without the agent runtime, so this action cannot run here.")

// PlanAction works out what pressing a would change now.
func PlanAction(ctx context.Context, d Deps, a Action) (Plan, error) {
	p, err := planAction(ctx, d, a)
	if err != nil || p.NoChange {
		return p, err
	}
	// Say before the press that a loosening button only asks.
	if pr, ok, perr := proposal(ctx, d, a); perr == nil && ok {
		if loosens, _ := changes.Loosens(pr.Kind, pr.Before, pr.After); loosens {
			p.WaitsForAdmin = true
			p.Summary += " This loosens a control, so pressing asks a second admin to approve it; nothing changes until then."
		}
	}
	return p, nil
}

func planAction(ctx context.Context, d Deps, a Action) (Plan, error) {
	q := d.DB.Read()
	p := Plan{Tool: a.Tool}
	switch a.Tool {
	case ToolRollbackRelease:
		p.Agent, p.Env, p.To = a.Args["agent"], a.Args["env"], a.Args["digest"]
		cur, err := releases.Active(ctx, q, p.Agent, p.Env)
		if errors.Is(err, store.ErrNotFound) {
			return p, problem.Unprocessable("no_release", "Agent "+p.Agent+" has no active release in "+p.Env+", so there is nothing to roll back.")
		}
		if err != nil {
			return p, err
		}
		p.From = cur.Digest
		if p.To == "" {
			if p.To, err = previousDigest(ctx, q, p.Agent, p.Env, cur.Digest); err != nil {
				return p, err
			}
		}
		from, err := releases.Get(ctx, q, p.From)
		if err != nil {
			return p, err
		}
		to, err := releases.Get(ctx, q, p.To)
		if err != nil {
			return p, err
		}
		p.Diff = releases.Diff(from.Bundle, to.Bundle)
		p.NoChange = p.From == p.To
		p.Summary = fmt.Sprintf("Roll %s in %s back from release %s to release %s.", p.Agent, p.Env, short(p.From), short(p.To))
	case ToolSwitchTool:
		on := a.Args["state"] == "on"
		if slug := a.Args["tenant"]; slug != "" {
			// A catalog tool or an MCP server's tool (SERVER__TOOL).
			t := struct{ Name string }{a.Args["name"]}
			err := catalog.Switchable(ctx, q, t.Name)
			if errors.Is(err, store.ErrNotFound) {
				return p, problem.NotFound("not_found", "There is no tool "+strconv.Quote(t.Name)+".")
			}
			if err != nil {
				return p, err
			}
			tn, err := tenantArg(ctx, q, slug)
			if err != nil {
				return p, err
			}
			off, err := catalog.OffForTenant(ctx, q, t.Name, tn.ID)
			if err != nil {
				return p, err
			}
			p.Tenant, p.NoChange = tn.Slug, off != on
			if on {
				p.Summary = fmt.Sprintf("Switch the tool %s back on for tenant %s (its own switch for every tenant stays as it is).", t.Name, tn.Slug)
			} else {
				p.Summary = fmt.Sprintf("Switch the tool %s off for tenant %s only: its calls there are refused (403 tool_disabled); every other tenant keeps it.", t.Name, tn.Slug)
			}
			break
		}
		t, err := catalog.Get(ctx, q, a.Args["name"])
		if errors.Is(err, store.ErrNotFound) {
			return p, problem.NotFound("not_found", "There is no tool "+strconv.Quote(a.Args["name"])+".")
		}
		if err != nil {
			return p, err
		}
		p.NoChange = t.Enabled == on
		p.Summary = fmt.Sprintf("Switch the tool %s %s for every tenant.", t.Name, a.Args["state"])
	case ToolSwitchMCPServer:
		srv, err := mcpservers.Get(ctx, q, a.Args["server"])
		if errors.Is(err, mcpservers.ErrNotFound) {
			return p, problem.NotFound("not_found", "There is no MCP server "+strconv.Quote(a.Args["server"])+".")
		}
		if err != nil {
			return p, err
		}
		p.NoChange = srv.Enabled == (a.Args["state"] == "on")
		p.Summary = fmt.Sprintf("Switch the MCP server %s %s for every tenant: while it is off, every call through /mcp to its tools is refused.", srv.Name, a.Args["state"])
	case ToolSwitchMCPTool:
		tl, err := mcpservers.GetTool(ctx, q, a.Args["server"], a.Args["tool"])
		if errors.Is(err, mcpservers.ErrToolNotFound) {
			return p, problem.NotFound("not_found", "The MCP server "+strconv.Quote(a.Args["server"])+" has no tool "+strconv.Quote(a.Args["tool"])+".")
		}
		if err != nil {
			return p, err
		}
		p.NoChange = tl.Enabled == (a.Args["state"] == "on")
		p.Summary = fmt.Sprintf("Switch the MCP tool %s %s for every tenant: while it is off, its calls through /mcp are refused.", tl.ExposedName(), a.Args["state"])
	case ToolSwitchSkill:
		if d.Runtime == nil {
			return p, errNoRuntime
		}
		names, err := d.Runtime.SkillNames(ctx)
		if err != nil {
			return p, err
		}
		if !slices.Contains(names, a.Args["name"]) {
			return p, problem.NotFound("not_found", "There is no skill "+strconv.Quote(a.Args["name"])+".")
		}
		on, err := catalog.SkillEnabled(ctx, q, a.Args["name"])
		if err != nil {
			return p, err
		}
		p.NoChange = on == (a.Args["state"] == "on")
		p.Summary = fmt.Sprintf("Switch the skill %s %s for every tenant.", a.Args["name"], a.Args["state"])
	case ToolFreezeTenant, ToolUnfreezeTenant:
		t, err := tenants.BySlug(ctx, q, a.Args["tenant"])
		if errors.Is(err, store.ErrNotFound) {
			return p, problem.NotFound("not_found", "There is no tenant "+strconv.Quote(a.Args["tenant"])+".")
		}
		if err != nil {
			return p, err
		}
		p.Tenant = t.Slug
		freeze := a.Tool == ToolFreezeTenant
		p.NoChange = t.Frozen == freeze
		if freeze {
			p.Summary = "Freeze tenant " + t.Name + " (" + t.Slug + "): its agents are refused until it is unfrozen."
		} else {
			p.Summary = "Unfreeze tenant " + t.Name + " (" + t.Slug + "): its agents may call again."
		}
	case ToolRevokeKey:
		k, err := keys.ByID(ctx, q, a.Args["key"])
		if errors.Is(err, store.ErrNotFound) {
			return p, problem.NotFound("not_found", "There is no key "+strconv.Quote(a.Args["key"])+".")
		}
		if err != nil {
			return p, err
		}
		p.Tenant = k.TenantSlug
		p.NoChange = k.RevokedAt != nil
		p.Summary = "Revoke key " + k.Name + " (" + k.Prefix + "…) of tenant " + k.TenantSlug + ": calls with it are refused from now on, for good."
	case ToolSetBudgetLimit:
		t, err := tenantArg(ctx, q, a.Args["tenant"])
		if err != nil {
			return p, err
		}
		p.Tenant = t.Slug
		limit, _ := money.ParseDecimal(a.Args["limit"], limitUnits)
		b, err := budgets.Get(ctx, q, t.ID)
		switch {
		case errors.Is(err, budgets.ErrNoBudget):
			p.Summary = fmt.Sprintf("Give tenant %s a monthly budget of %s (alert at %d%%).", t.Slug, money.FormatMicros(limit, usd), defaultAlertPercent)
		case err != nil:
			return p, err
		default:
			p.NoChange = b.LimitMicros == limit
			p.Summary = fmt.Sprintf("Change tenant %s's %s budget limit from %s to %s.", t.Slug, b.Period,
				money.FormatMicros(b.LimitMicros, usd), money.FormatMicros(limit, usd))
		}
	case ToolExpirePending:
		if d.Runtime == nil {
			return p, errNoRuntime
		}
		t, err := tenantArg(ctx, q, a.Args["tenant"])
		if err != nil {
			return p, err
		}
		p.Tenant = t.Slug
		ids, err := approvals.PendingIDs(ctx, q, t.ID, a.Args["tool"])
		if err != nil {
			return p, err
		}
		p.NoChange = len(ids) == 0
		what := "pending actions"
		if a.Args["tool"] != "" {
			what = "pending " + a.Args["tool"] + " actions"
		}
		p.Summary = fmt.Sprintf("Expire tenant %s's %d %s now: nobody can approve them any more, and the journeys that wait for them end.", t.Slug, len(ids), what)
	case ToolPurgeTraces:
		if d.Sealer == nil {
			return p, errNoRuntime
		}
		t, err := tenantArg(ctx, q, a.Args["tenant"])
		if err != nil {
			return p, err
		}
		p.Tenant, p.NeedsApproval = t.Slug, true
		now := time.Now()
		if p.Since, err = parseWhen(a.Args["from"], now); err != nil {
			return p, problem.Invalid("bad_time", "from: "+err.Error())
		}
		if p.Until, err = parseWhen(a.Args["to"], now); err != nil {
			return p, problem.Invalid("bad_time", "to: "+err.Error())
		}
		if !p.Since.Before(p.Until) {
			return p, problem.Unprocessable("empty_range", "The purge's from is not before its to, so it would delete nothing.")
		}
		p.Summary = fmt.Sprintf("Delete tenant %s's traces (journeys and their steps) created from %s to %s. Audit events are kept. Someone other than you must approve it first.",
			t.Slug, p.Since.Format(time.RFC3339), p.Until.Format(time.RFC3339))
	case ToolRetryFailed:
		if d.Runtime == nil || d.Sealer == nil {
			return p, errNoRuntime
		}
		t, err := tenantArg(ctx, q, a.Args["tenant"])
		if err != nil {
			return p, err
		}
		tool, err := catalog.Get(ctx, q, a.Args["tool"])
		if errors.Is(err, store.ErrNotFound) {
			return p, problem.NotFound("not_found", "There is no tool "+strconv.Quote(a.Args["tool"])+".")
		}
		if err != nil {
			return p, err
		}
		ids, err := approvals.FailedIDs(ctx, q, t.ID, tool.Name)
		if err != nil {
			return p, err
		}
		// Retrying a money-moving tool moves money: another person decides.
		p.Tenant, p.NeedsApproval, p.NoChange = t.Slug, tool.Impact == risk.ImpactHigh, len(ids) == 0
		p.Summary = fmt.Sprintf("Execute again tenant %s's %d failed %s actions whose effect never reached the provider, under their own idempotency keys; any that may have reached it are left to reconciliation.",
			t.Slug, len(ids), tool.Name)
		if p.NeedsApproval {
			p.Summary += " " + tool.Name + " has a high impact, so someone other than you must approve it first."
		}
	case ToolReconcileEffects:
		if d.Runtime == nil {
			return p, errNoRuntime
		}
		p.Summary = "Ask the tool providers now about effects a crash left unfinished, and finish or fail their actions."
	default:
		return p, problem.Unprocessable("unknown_tool", "The action names no tool Warden knows.")
	}
	return p, nil
}

// retried says what a retry did.
func retried(rep execution.RetryReport) string {
	return fmt.Sprintf("Retried %d failed actions under their own keys; %d may have reached the provider and are left to reconciliation; %d skipped.",
		len(rep.Retried), len(rep.Reconcile), len(rep.Skipped))
}

// defaultAlertPercent is the alert threshold of a budget a runbook
// creates (the tenant had none).
const defaultAlertPercent = 80

var usd = money.MustCurrency("USD")

func tenantArg(ctx context.Context, q store.Querier, slug string) (tenants.Tenant, error) {
	t, err := tenants.BySlug(ctx, q, slug)
	if errors.Is(err, store.ErrNotFound) {
		return t, problem.NotFound("not_found", "There is no tenant "+strconv.Quote(slug)+".")
	}
	return t, err
}

// previousDigest is the release the agent ran before the active one: the
// newest history row with another digest.
func previousDigest(ctx context.Context, q store.Querier, agent, env, active string) (string, error) {
	page, err := store.ParsePage("", "", 100)
	if err != nil {
		return "", err
	}
	hist, err := releases.History(ctx, q, agent, env, page)
	if err != nil {
		return "", err
	}
	for _, p := range hist.Rows {
		if p.Digest != active {
			return p.Digest, nil
		}
	}
	return "", problem.Unprocessable("no_previous_release", "Agent "+agent+" ran no other release in "+env+", so there is nothing to roll back to.")
}

// short is a digest as people compare it: "sha256:" and 12 hex digits.
func short(digest string) string {
	if len(digest) > 19 {
		return digest[:19]
	}
	return digest
}

// apply runs the tool: one domain entry point, which records its own
// audit event when something changes. It returns the outcome in words.
func apply(ctx context.Context, d Deps, by releases.Author, a Action, p Plan, reason string) (string, error) {
	actor := by.Actor
	switch a.Tool {
	case ToolRollbackRelease:
		_, changed, err := releases.Rollback(ctx, d.DB, by, p.Agent, p.Env, p.To, reason)
		if err != nil {
			return "", err
		}
		if !changed {
			return "Release " + short(p.To) + " was already active; nothing changed.", nil
		}
		return "Rolled " + p.Agent + " in " + p.Env + " back from " + short(p.From) + " to " + short(p.To) + ".", nil
	case ToolSwitchTool, ToolSwitchSkill:
		on := a.Args["state"] == "on"
		r := reason
		if on {
			r = ""
		}
		var changed bool
		var err error
		what := "tool"
		if a.Tool == ToolSwitchTool && a.Args["tenant"] != "" {
			t, err := tenants.BySlug(ctx, d.DB.Read(), a.Args["tenant"])
			if err != nil {
				return "", err
			}
			changed, err = catalog.SwitchForTenant(ctx, d.DB, actor, a.Args["name"], t.ID, t.Slug, on, r)
			if err != nil {
				return "", err
			}
			if !changed {
				return "The tool " + a.Args["name"] + " was already " + a.Args["state"] + " for tenant " + t.Slug + "; nothing changed.", nil
			}
			return "Switched the tool " + a.Args["name"] + " " + a.Args["state"] + " for tenant " + t.Slug + "; other tenants are not affected.", nil
		}
		if a.Tool == ToolSwitchTool {
			changed, err = catalog.Switch(ctx, d.DB, actor, a.Args["name"], on, r)
		} else {
			what = "skill"
			changed, err = catalog.SwitchSkill(ctx, d.DB, actor, a.Args["name"], on, r)
		}
		if err != nil {
			return "", err
		}
		if !changed {
			return "The " + what + " " + a.Args["name"] + " was already " + a.Args["state"] + "; nothing changed.", nil
		}
		return "Switched the " + what + " " + a.Args["name"] + " " + a.Args["state"] + ".", nil
	case ToolSwitchMCPServer, ToolSwitchMCPTool:
		on := a.Args["state"] == "on"
		r := reason
		if on {
			r = ""
		}
		var changed bool
		var err error
		what := "MCP server " + a.Args["server"]
		if a.Tool == ToolSwitchMCPServer {
			changed, err = mcpservers.SwitchServer(ctx, d.DB, actor, a.Args["server"], on, r)
		} else {
			what = "MCP tool " + a.Args["server"] + "__" + a.Args["tool"]
			changed, err = mcpservers.SetToolEnabled(ctx, d.DB, actor, a.Args["server"], a.Args["tool"], on, r)
		}
		if err != nil {
			return "", err
		}
		if !changed {
			return "The " + what + " was already " + a.Args["state"] + "; nothing changed.", nil
		}
		return "Switched the " + what + " " + a.Args["state"] + ".", nil
	case ToolFreezeTenant, ToolUnfreezeTenant:
		t, err := tenants.BySlug(ctx, d.DB.Read(), a.Args["tenant"])
		if err != nil {
			return "", err
		}
		freeze := a.Tool == ToolFreezeTenant
		changed, err := tenants.SetFrozen(ctx, d.DB, actor, t.ID, freeze, reason)
		if err != nil {
			return "", err
		}
		verb := map[bool]string{true: "frozen", false: "unfrozen"}[freeze]
		if !changed {
			return "Tenant " + t.Slug + " was already " + verb + "; nothing changed.", nil
		}
		return "Tenant " + t.Slug + " is " + verb + ".", nil
	case ToolRevokeKey:
		changed, err := keys.RevokeAudited(ctx, d.DB, actor, a.Args["key"])
		if err != nil {
			return "", err
		}
		if !changed {
			return "The key was already revoked; nothing changed.", nil
		}
		return "The key is revoked.", nil
	case ToolSetBudgetLimit:
		t, err := tenants.BySlug(ctx, d.DB.Read(), a.Args["tenant"])
		if err != nil {
			return "", err
		}
		limit, err := money.ParseDecimal(a.Args["limit"], limitUnits)
		if err != nil {
			return "", problem.Invalid("bad_limit", "The limit "+strconv.Quote(a.Args["limit"])+" is not an amount: "+err.Error()+".")
		}
		now := time.Now().UTC()
		spec := budgets.Spec{TenantID: t.ID, Period: budgets.Month, LimitMicros: limit, AlertPercent: defaultAlertPercent}
		if b, err := budgets.Get(ctx, d.DB.Read(), t.ID); err == nil {
			spec.Period, spec.AlertPercent = b.Period, b.AlertPercent
		} else if !errors.Is(err, budgets.ErrNoBudget) {
			return "", err
		}
		changed, err := budgets.SetAudited(ctx, d.DB, actor, spec, now)
		if err != nil {
			return "", err
		}
		if !changed {
			return "Tenant " + t.Slug + "'s budget limit was already " + money.FormatMicros(limit, usd) + "; nothing changed.", nil
		}
		return "Tenant " + t.Slug + "'s " + spec.Period + " budget limit is " + money.FormatMicros(limit, usd) + ".", nil
	case ToolExpirePending:
		t, err := tenants.BySlug(ctx, d.DB.Read(), a.Args["tenant"])
		if err != nil {
			return "", err
		}
		ids, err := approvals.PendingIDs(ctx, d.DB.Read(), t.ID, a.Args["tool"])
		if err != nil {
			return "", err
		}
		n, err := d.Runtime.ExpirePending(ctx, ids, actor, reason)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Expired %d pending actions of tenant %s.", n, t.Slug), nil
	case ToolRetryFailed:
		t, err := tenants.BySlug(ctx, d.DB.Read(), a.Args["tenant"])
		if err != nil {
			return "", err
		}
		var rep execution.RetryReport
		err = d.DB.Transact(ctx, func(tx *store.Tx) (err error) {
			rep, err = d.Runtime.RetryFailed(ctx, tx, t.ID, a.Args["tool"], p.run, actor, reason)
			return err
		})
		if err != nil {
			return "", err
		}
		return retried(rep), nil
	case ToolReconcileEffects:
		rep, err := d.Runtime.Reconcile(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Reconciled: %d recorded, %d executed again, %d failed, %d to retry, %d to review.",
			len(rep.Recorded), len(rep.Reexecuted), len(rep.Failed), len(rep.Retry), len(rep.Review)), nil
	}
	return "", problem.Unprocessable("unknown_tool", "The action names no tool Warden knows.")
}
