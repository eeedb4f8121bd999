package runbooks

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/tenants"
)

// WaitsPrefix starts a run's outcome when its button asked for a change
// that loosens a control (docs/changes.md) instead of making it.
const WaitsPrefix = "Waits for a second admin: "

// proposal is the governed change a button would make (switch something
// back on, unfreeze a tenant, set a budget limit), or ok false for a tool
// that is not governed. The values are those the console's forms record,
// so an approval applies it the same way.
func proposal(ctx context.Context, d Deps, a Action) (pr changes.Proposal, ok bool, err error) {
	q := d.DB.Read()
	on := a.Args["state"] == "on"
	sw := func(kind, what, name string, wasOn bool) changes.Proposal {
		verb := "Switch off "
		if on {
			verb = "Switch on "
		}
		return changes.Proposal{Kind: kind, Subject: name, Summary: verb + what + " " + name,
			Before: changes.Switch{On: wasOn}, After: changes.Switch{On: on}}
	}
	switch a.Tool {
	case ToolSwitchTool:
		if a.Args["tenant"] != "" {
			t, err := tenants.BySlug(ctx, q, a.Args["tenant"])
			if err != nil {
				return pr, false, err
			}
			off, err := catalog.OffForTenant(ctx, q, a.Args["name"], t.ID)
			if err != nil {
				return pr, false, err
			}
			pr = sw(changes.ToolTenantSwitch, "tool", a.Args["name"], !off)
			pr.TenantID, pr.TenantSlug, pr.Summary = t.ID, t.Slug, pr.Summary+" for tenant "+t.Slug
			return pr, true, nil
		}
		t, err := catalog.Get(ctx, q, a.Args["name"])
		if err != nil {
			return pr, false, err
		}
		return sw(changes.ToolSwitch, "tool", t.Name, t.Enabled), true, nil
	case ToolSwitchSkill:
		was, err := catalog.SkillEnabled(ctx, q, a.Args["name"])
		if err != nil {
			return pr, false, err
		}
		return sw(changes.SkillSwitch, "skill", a.Args["name"], was), true, nil
	case ToolSwitchMCPServer:
		s, err := mcpservers.Get(ctx, q, a.Args["server"])
		if err != nil {
			return pr, false, err
		}
		return sw(changes.MCPServerSwitch, "MCP server", s.Name, s.Enabled), true, nil
	case ToolSwitchMCPTool:
		t, err := mcpservers.GetTool(ctx, q, a.Args["server"], a.Args["tool"])
		if err != nil {
			return pr, false, err
		}
		return sw(changes.MCPToolSwitch, "MCP tool", a.Args["server"]+"__"+a.Args["tool"], t.Enabled), true, nil
	case ToolUnfreezeTenant:
		t, err := tenants.BySlug(ctx, q, a.Args["tenant"])
		if err != nil {
			return pr, false, err
		}
		return changes.Proposal{Kind: changes.TenantFreeze, TenantID: t.ID, TenantSlug: t.Slug, Subject: t.Slug,
			Summary: "Unfreeze tenant " + t.Slug, Before: changes.Frozen{Frozen: t.Frozen}, After: changes.Frozen{Frozen: false}}, true, nil
	case ToolSetBudgetLimit:
		t, err := tenants.BySlug(ctx, q, a.Args["tenant"])
		if err != nil {
			return pr, false, err
		}
		limit, err := money.ParseDecimal(a.Args["limit"], limitUnits)
		if err != nil {
			return pr, false, nil // apply refuses it in words
		}
		before, after := changes.Budget{}, changes.Budget{Exists: true, Period: budgets.Month, LimitMicros: limit, AlertPercent: defaultAlertPercent}
		switch b, err := budgets.Get(ctx, q, t.ID); {
		case err == nil:
			before = changes.Budget{Exists: true, Period: b.Period, LimitMicros: b.LimitMicros, AlertPercent: b.AlertPercent}
			after.Period, after.AlertPercent = b.Period, b.AlertPercent
		case !errors.Is(err, budgets.ErrNoBudget):
			return pr, false, err
		}
		shown := func(b changes.Budget) string {
			if !b.Exists {
				return "no budget (nothing runs)"
			}
			return money.FormatMicros(b.LimitMicros, usd) + " a " + b.Period
		}
		before.Shown, after.Shown = shown(before), shown(after)
		return changes.Proposal{Kind: changes.BudgetLimit, TenantID: t.ID, TenantSlug: t.Slug, Subject: t.Slug,
			Summary: "Change " + t.Slug + "'s budget from " + before.Shown + " to " + after.Shown, Before: before, After: after}, true, nil
	}
	return pr, false, nil
}

// governed asks for the button's change as a pending change when it
// loosens a control: the presser's reason is the change's reason, and the
// outcome says it waits for a second admin. asked false: the button
// tightens or is not governed, and runs as before.
func governed(ctx context.Context, d Deps, p *identity.Principal, a Action, reason string) (outcome string, asked bool, err error) {
	pr, ok, err := proposal(ctx, d, a)
	if err != nil || !ok {
		return "", false, err
	}
	loosens, err := changes.Loosens(pr.Kind, pr.Before, pr.After)
	if err != nil || !loosens {
		return "", false, err
	}
	pr.Reason = reason
	c, err := changes.Request(ctx, d.DB, *p, pr, time.Now())
	if err != nil {
		return "", false, err
	}
	return WaitsPrefix + c.Summary + " (change " + c.ID + "); it applies once another admin approves it on Changes.", true, nil
}
