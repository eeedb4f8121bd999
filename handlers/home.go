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
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
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
	// On-call is paged by alerts: their home page starts with what fires,
	// what nobody acknowledged first. Admins see what on-call sees, and
	// the work only they can clear.
	if user.HasAnyRole(identity.RoleOncall, identity.RoleAdmin) && h.Runtime != nil {
		if v.Alerts, err = h.firingSummaries(ctx, user); err != nil {
			return fmt.Errorf("home: firing alerts: %w", err)
		}
	}
	if user.HasAnyRole(identity.RoleOncall, identity.RoleAdmin) {
		if v.Oncall, err = oncallHome(ctx, h.DB, user, scope); err != nil {
			return fmt.Errorf("home: on-call review: %w", err)
		}
	}
	if user.HasRole(identity.RoleAdmin) {
		if v.Admin, err = adminHome(ctx, h.DB, user, ids, now); err != nil {
			return fmt.Errorf("home: admin work: %w", err)
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
	perTenant, err := catalog.TenantSwitches(ctx, db.Read())
	if err != nil {
		return nil, err
	}
	for _, s := range perTenant {
		if user.InTenant(s.TenantSlug) {
			o.Off = append(o.Off, views.SwitchedOff{Kind: "tool", Name: s.Tool, Tenant: s.TenantSlug, Reason: s.Reason, At: s.At})
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

// keyExpiryWindow is how soon a key's expiry puts it on an admin's home.
const keyExpiryWindow = 14 * 24 * time.Hour

// adminHome is the work only admins clear: jobs that failed for good
// (shown to admins of all tenants, as on Status: a job may concern any
// tenant) and agent keys of their tenants that expire soon.
func adminHome(ctx context.Context, db *store.DB, user *identity.Principal, tenantIDs []string, now time.Time) (*views.AdminHome, error) {
	a := &views.AdminHome{ExpiryWindow: keyExpiryWindow}
	bg, err := changes.Unreviewed(ctx, db.Read(), *user)
	if err != nil {
		return nil, err
	}
	pending, _, err := changes.Queue(ctx, db.Read(), *user, now)
	if err != nil {
		return nil, err
	}
	a.BreakGlass, a.PendingChanges = bg, len(pending)
	if user.AllTenantScope() {
		failed, total, err := jobs.ListFailed(ctx, db, homeListSize)
		if err != nil {
			return nil, err
		}
		a.FailedJobsTotal = total
		for _, f := range failed {
			a.FailedJobs = append(a.FailedJobs, views.FailedJob{ID: f.ID, Kind: views.JobKind(f.Kind), Permanent: f.Permanent, Attempts: f.Attempts, At: f.At})
		}
	}
	ks, err := keys.List(ctx, db.Read(), tenantIDs)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		if k.RevokedAt != nil || k.ExpiresAt == nil || k.ExpiresAt.Before(now) || k.ExpiresAt.After(now.Add(keyExpiryWindow)) {
			continue
		}
		a.Expiring = append(a.Expiring, views.ExpiringKey{ID: k.ID, Name: k.Name, Tenant: k.TenantSlug, ExpiresAt: *k.ExpiresAt})
	}
	sort.Slice(a.Expiring, func(i, j int) bool { return a.Expiring[i].ExpiresAt.Before(a.Expiring[j].ExpiresAt) })
	if len(a.Expiring) > homeListSize {
		a.Expiring = a.Expiring[:homeListSize]
	}
	return a, nil
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
