package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// homeListSize is how many rows each to-do list of the home page shows;
// each links to the page with all of them.
const homeListSize = 10

// Home is each role's to-do list: approvers see what waits for them, what
// waits on a second approver and how their decisions turned out; on-call
// what failed, fires, is frozen or switched off; auditors the chain and
// the latest exports. A user with no role sees only who they are.
func (h *Console) Home(c echo.Context) error {
	user := CurrentPrincipal(c)
	ctx := c.Request().Context()
	now := time.Now().UTC()
	v := views.HomeView{Now: now, Counts: len(user.Roles) > 0}
	if !v.Counts {
		page := PageFor(c, "Home")
		return Render(c, http.StatusOK, page, views.Home(page, v))
	}
	scope, ids, err := tenantScope(ctx, h.DB, user, "")
	if err != nil {
		return fmt.Errorf("home: tenant scope: %w", err)
	}
	v.Tenants = int64(len(scope))
	if v.AuditEvents, err = audit.Count(ctx, h.DB.Read()); err != nil {
		return fmt.Errorf("home: count audit events: %w", err)
	}
	if user.HasRole(identity.RoleApprover) {
		if v.Approver, err = approverHome(ctx, h.DB, user, ids, now); err != nil {
			return fmt.Errorf("home: approver inbox: %w", err)
		}
	}
	// On-call is paged by alerts: their home page starts with what fires.
	if user.HasRole(identity.RoleOncall) {
		if v.Alerts, err = firingAlerts(ctx, h.DB.Read(), user); err != nil {
			return fmt.Errorf("home: firing alerts: %w", err)
		}
		if v.Oncall, err = oncallHome(ctx, h.DB, user, scope); err != nil {
			return fmt.Errorf("home: on-call review: %w", err)
		}
	}
	if user.HasRole(identity.RoleAuditor) {
		if v.Auditor, err = auditorHome(ctx, h.DB, user, scope); err != nil {
			return fmt.Errorf("home: audit chain: %w", err)
		}
	}
	page := PageFor(c, "Home")
	return Render(c, http.StatusOK, page, views.Home(page, v))
}

func approverHome(ctx context.Context, db *store.DB, user *identity.Principal, tenantIDs []string, now time.Time) (*views.ApproverHome, error) {
	in, err := approvals.InboxFor(ctx, db.Read(), user.ID, tenantIDs, homeListSize, now)
	if err != nil {
		return nil, err
	}
	a := &views.ApproverHome{WaitingTotal: in.WaitingTotal, OnOthersTotal: in.OnOthersTotal}
	a.Waiting, a.OnOthers = homeActions(in.Waiting), homeActions(in.OnOthers)
	for _, d := range in.Recent {
		a.Recent = append(a.Recent, views.HomeDecision{
			ActionID: d.Action.ID, Summary: d.Action.Summary, Tenant: d.Action.TenantSlug,
			Decision: d.Decision, Status: d.Action.Status, At: d.DecidedAt,
		})
	}
	return a, nil
}

func homeActions(rows []approvals.Row) []views.HomeAction {
	out := make([]views.HomeAction, 0, len(rows))
	for _, r := range rows {
		out = append(out, views.HomeAction{
			ID: r.ID, Summary: r.Summary, Tenant: r.TenantSlug,
			ApprovalsGiven: r.ApprovalsGiven, ApprovalsRequired: r.ApprovalsRequired, ExpiresAt: r.ExpiresAt,
		})
	}
	return out
}

func oncallHome(ctx context.Context, db *store.DB, user *identity.Principal, scope []tenants.Tenant) (*views.OncallHome, error) {
	r, err := reviewFor(ctx, db, user, store.Page{Size: homeListSize})
	if err != nil {
		return nil, err
	}
	o := &views.OncallHome{Failed: reviewItems(r.Failed.Rows), FailedTotal: r.FailedTotal, ReviewEffects: r.Effects}
	for _, t := range scope {
		if t.Frozen {
			o.Frozen = append(o.Frozen, t)
		}
	}
	tools, err := catalog.List(ctx, db.Read())
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if !t.Enabled {
			o.Off = append(o.Off, views.SwitchedOff{Kind: "tool", Name: t.Name})
		}
	}
	skills, err := catalog.SkillSwitches(ctx, db.Read())
	if err != nil {
		return nil, err
	}
	var off []views.SwitchedOff
	for _, s := range skills {
		if !s.Enabled {
			off = append(off, views.SwitchedOff{Kind: "skill", Name: s.Skill, Reason: s.Reason, At: s.ChangedAt})
		}
	}
	sort.Slice(off, func(i, j int) bool { return off[i].Name < off[j].Name })
	o.Off = append(o.Off, off...)
	return o, nil
}

// homeExports is how many of the latest audit exports an auditor's home
// lists.
const homeExports = 5

func auditorHome(ctx context.Context, db *store.DB, user *identity.Principal, scope []tenants.Tenant) (*views.AuditorHome, error) {
	chain, err := chainStatus(ctx, db)
	if err != nil {
		return nil, err
	}
	a := &views.AuditorHome{Chain: chain}
	q := audit.Query{Verb: "audit.export"}
	if !user.AllTenantScope() {
		q.Tenants = []string{}
		for _, t := range scope {
			q.Tenants = append(q.Tenants, t.Slug)
		}
	}
	exports, err := audit.Page(ctx, db.Read(), q, store.Page{Size: homeExports})
	if err != nil {
		return nil, err
	}
	var who []string
	for _, e := range exports.Rows {
		who = append(who, e.Actor.ID)
	}
	names, err := principals.NamesOf(ctx, db, who)
	if err != nil {
		return nil, err
	}
	for _, e := range exports.Rows {
		x := views.HomeExport{Seq: e.Seq, At: e.Time, By: names.Of(e.Actor.ID)}
		x.Format, _ = e.Details["format"].(string)
		x.SHA256, _ = e.Details["sha256"].(string)
		if n, ok := e.Details["rows"].(json.Number); ok {
			x.Rows, _ = n.Int64()
		}
		a.Exports = append(a.Exports, x)
	}
	return a, nil
}

// tenantFilter turns a principal's scope into a store filter: nil for all.
func tenantFilter(p *identity.Principal) []string {
	if p.AllTenantScope() {
		return nil
	}
	return append([]string{}, p.Tenants...)
}
