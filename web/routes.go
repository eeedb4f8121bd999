package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/seal"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/static"
	"github.com/wardenhq/warden/views"
)

// route is one console page. The table below is the whole signed-in
// surface: the navigation is built from it, so a page a user cannot open
// is never offered.
type route struct {
	method  string
	path    string
	handler echo.HandlerFunc
	roles   []string // any of these; none means every signed-in user
	nav     string   // label in the navigation; empty for no entry
}

func (s *Server) consoleRoutes() []route {
	return []route{
		{http.MethodGet, "/", handlers.Home(s.counts), nil, "Home"},
		{http.MethodGet, "/approvals", handlers.ApprovalList(s.db), []string{identity.RoleApprover}, "Approvals"},
		{http.MethodGet, "/approvals/rows", handlers.ApprovalQueueRows(s.db), []string{identity.RoleApprover}, ""},
		{http.MethodGet, "/approvals/:id", handlers.ApprovalShow(s.db), []string{identity.RoleApprover, identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodPost, "/approvals/:id/decide", handlers.ApprovalDecide(s.db, s.runtime), []string{identity.RoleApprover}, ""},
		{http.MethodGet, "/approvals/:id/reverse", handlers.ApprovalReverseConfirm(s.db), approvals.ReverseRoles, ""},
		{http.MethodPost, "/approvals/:id/reverse", handlers.ApprovalReverse(s.db, s.runtime), approvals.ReverseRoles, ""},
		{http.MethodGet, "/status", handlers.Status(s.status), []string{identity.RoleOncall, identity.RoleAdmin}, "Status"},
		{http.MethodGet, "/audit", handlers.AuditList(s.db.Read(), s.db), []string{identity.RoleAuditor, identity.RoleAdmin}, "Audit trail"},
		{http.MethodPost, "/audit/verify", handlers.AuditVerify(s.db.Read(), s.db, s.recordVerify), []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodGet, "/tenants", handlers.TenantList(s.db), []string{identity.RoleAdmin}, "Tenants"},
		{http.MethodPost, "/tenants", handlers.TenantCreate(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/tenants/:slug", handlers.TenantShow(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/rename", handlers.TenantRename(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/retention", handlers.TenantRetention(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/dual-control", handlers.TenantDualControl(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/dual-control/remove", handlers.TenantDualControlRemove(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/dual-control-window", handlers.TenantDualControlWindow(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/tenants/:slug/freeze", handlers.TenantFreezeConfirm(s.db, true), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/freeze", handlers.TenantFreeze(s.db, true), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/tenants/:slug/unfreeze", handlers.TenantFreezeConfirm(s.db, false), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tenants/:slug/unfreeze", handlers.TenantFreeze(s.db, false), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/keys", handlers.KeyList(s.db), []string{identity.RoleAdmin}, "Keys"},
		{http.MethodGet, "/keys/new", handlers.KeyNew(s.db, s.skillNames()), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/keys/:id/created", handlers.KeyCreated(s.db, sessionFlash{s}), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/keys", handlers.KeyCreate(s.db, s.skillNames(), s.sealer(), sessionFlash{s}), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/keys/:id", handlers.KeyShow(s.db, sessionFlash{s}), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/keys/:id/callback-secret/rotate", handlers.KeyCallbackRotateConfirm(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/keys/:id/callback-secret/rotate", handlers.KeyCallbackRotate(s.db, s.sealer(), sessionFlash{s}), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/keys/:id/revoke", handlers.KeyRevokeConfirm(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/keys/:id/revoke", handlers.KeyRevoke(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/budgets", handlers.BudgetList(s.db), []string{identity.RoleAdmin}, "Budgets"},
		{http.MethodPost, "/budgets/:tenant", handlers.BudgetEdit(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/tools", handlers.ToolList(s.db), []string{identity.RoleAdmin}, "Tools"},
		{http.MethodGet, "/tools/new", handlers.ToolNew(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tools", handlers.ToolCreate(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/tools/:name/edit", handlers.ToolEditForm(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tools/:name", handlers.ToolUpdate(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tools/:name/enable", handlers.ToolSwitch(s.db, true), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/tools/:name/disable", handlers.ToolDisableConfirm(s.db), []string{identity.RoleAdmin}, ""},
		{http.MethodPost, "/tools/:name/disable", handlers.ToolSwitch(s.db, false), []string{identity.RoleAdmin}, ""},
		{http.MethodGet, "/traces", handlers.TraceList(s.db), []string{identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}, "Traces"},
		{http.MethodGet, "/traces/:id", handlers.TraceDetail(s.db), []string{identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}, ""},
	}
}

// routes registers every route of the server.
func (s *Server) routes() {
	e := s.echo
	pages := s.consoleRoutes()

	// Open to everyone: operations, assets, sign-in.
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/static/*", echo.WrapHandler(http.StripPrefix("/static/", static.Handler())))
	if s.devIdP != nil {
		e.Any(devIdPPath+"/*", echo.WrapHandler(s.devIdP))
	}

	// The agents' JSON API: virtual keys, no cookies, no CSRF.
	if s.gateway != nil && s.runtime != nil {
		api := handlers.JourneyAPI{DB: s.db, Gateway: s.gateway, Runtime: s.runtime}
		e.POST("/v1/journeys", api.CreateJourney)
		e.GET("/v1/journeys/:id", api.GetJourney)
		actions := handlers.ActionAPI{DB: s.db, Gateway: s.gateway, Runtime: s.runtime}
		e.POST("/v1/actions", actions.Propose)
		e.GET("/v1/actions/:id", actions.Get)
		e.POST("/v1/actions/:id/result", actions.Result)
		e.POST("/v1/actions/:id/cancel", actions.Cancel)
	}

	e.Use(s.loadSession(), s.csrf(), s.page(pages))
	e.GET("/login", s.loginPage)
	e.GET("/auth/login", s.loginStart)
	e.GET("/auth/callback", s.loginCallback)
	e.POST("/auth/logout", s.logout, requireLogin)

	// Signed in, and holding the page's role.
	for _, r := range pages {
		mw := []echo.MiddlewareFunc{requireLogin}
		if len(r.roles) > 0 {
			mw = append(mw, requireRole(r.roles...))
		}
		e.Add(r.method, r.path, r.handler, mw...)
	}
}

func navFor(routes []route, p *identity.Principal) []views.NavItem {
	var out []views.NavItem
	for _, r := range routes {
		if r.nav != "" && allowed(p, r.roles) {
			out = append(out, views.NavItem{Label: r.nav, Path: r.path})
		}
	}
	return out
}

// sealer keeps keys' callback secrets sealed: the runtime's, or none
// without a runtime (then creating a key fails).
func (s *Server) sealer() *seal.Sealer {
	if s.runtime != nil {
		return s.runtime.Sealer()
	}
	return nil
}

// skillNames is where the key form finds the skills to offer as scopes:
// the runtime's router, or none without a runtime.
func (s *Server) skillNames() handlers.SkillLister {
	if s.runtime != nil {
		return s.runtime
	}
	return handlers.StaticSkills{}
}
