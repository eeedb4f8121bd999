package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
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
	h := &handlers.Console{DB: s.db, Runtime: s.runtime, Execution: s.execution, Sealer: s.sealer(), MCP: s.mcpGateway(), Notify: s.notifier(), Runbooks: s.runbooks, Flash: sessionFlash{s}, StatusView: s.status,
		SessionPolicy: s.policy, SessionClock: s.now, BreakGlass: s.cfg.BreakGlass}
	h.Redactor, _ = s.redactor.(*redact.Redactor)
	all := []string{identity.RoleApprover, identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}
	approver, admin := []string{identity.RoleApprover}, []string{identity.RoleAdmin}
	readers := []string{identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}
	oncallAdmin := []string{identity.RoleOncall, identity.RoleAdmin}
	routes := []route{
		{http.MethodGet, "/", h.Home, nil, "Home"},
		{http.MethodGet, "/approvals", h.ApprovalList, approver, "Approvals"},
		{http.MethodGet, "/approvals/rows", h.ApprovalQueueRows, approver, ""},
		{http.MethodGet, "/approvals/:id", h.ApprovalShow, all, ""},
		// Every action in any status, for whoever may open an action's
		// page (in their tenants), and the header's search.
		{http.MethodGet, "/actions", h.ActionList, all, "Actions"},
		{http.MethodGet, "/search", h.Search, all, ""},
		{http.MethodGet, "/status", h.Status, oncallAdmin, "Status"},
		{http.MethodPost, "/status/jobs/:id/retry", h.JobRetry, oncallAdmin, ""},
		{http.MethodGet, "/audit", h.AuditList, []string{identity.RoleAuditor, identity.RoleAdmin}, "Audit trail"},
		{http.MethodPost, "/audit/verify", h.AuditVerify, []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		// An action's decision trail has the readers of its journey's trace:
		// auditors and admins, and on-call in an incident.
		{http.MethodGet, "/audit/actions/:id", h.AuditTrail, readers, ""},
		{http.MethodGet, "/audit/export.jsonl", h.AuditExportJSONL, []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodGet, "/audit/export.jsonl.manifest.json", h.AuditExportJSONLManifest, []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodGet, "/audit/export.csv", h.AuditExportCSV, []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodGet, "/audit/export.csv.manifest.json", h.AuditExportCSVManifest, []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodGet, "/tenants", h.TenantList, admin, "Tenants"},
		{http.MethodPost, "/tenants", h.TenantCreate, admin, ""},
		// Governed changes (docs/changes.md): admins decide; on-call, who
		// may ask for a switch to be turned back on, follows theirs.
		{http.MethodGet, "/changes", h.ChangeList, admin, "Changes"},
		{http.MethodGet, "/changes/:id", h.ChangeShow, oncallAdmin, ""},
		{http.MethodPost, "/changes/:id/decide", h.ChangeDecide, admin, ""},
		{http.MethodPost, "/changes/:id/review", h.ChangeReview, admin, ""},
		{http.MethodGet, "/tenants/:slug", h.TenantShow, admin, ""},
		{http.MethodPost, "/tenants/:slug/rename", h.TenantRename, admin, ""},
		{http.MethodPost, "/tenants/:slug/retention", h.TenantRetention, admin, ""},
		{http.MethodPost, "/tenants/:slug/dual-control", h.TenantDualControl, admin, ""},
		{http.MethodPost, "/tenants/:slug/dual-control/remove", h.TenantDualControlRemove, admin, ""},
		{http.MethodPost, "/tenants/:slug/dual-control-window", h.TenantDualControlWindow, admin, ""},
		{http.MethodPost, "/tenants/:slug/model-settings", h.TenantModelSettings, admin, ""},
		{http.MethodGet, "/tenants/:slug/allow-list", h.AllowList, admin, ""},
		{http.MethodPost, "/tenants/:slug/allow-list", h.AllowListAdd, admin, ""},
		{http.MethodGet, "/tenants/:slug/allow-list/remove", h.AllowListRemoveConfirm, admin, ""},
		{http.MethodPost, "/tenants/:slug/allow-list/remove", h.AllowListRemove, admin, ""},
		{http.MethodGet, "/tenants/:slug/freeze", h.TenantFreezeConfirm, admin, ""},
		{http.MethodPost, "/tenants/:slug/freeze", h.TenantFreeze, admin, ""},
		{http.MethodGet, "/tenants/:slug/unfreeze", h.TenantUnfreezeConfirm, admin, ""},
		{http.MethodPost, "/tenants/:slug/unfreeze", h.TenantUnfreeze, admin, ""},
		{http.MethodGet, "/keys", h.KeyList, admin, "Keys"},
		{http.MethodGet, "/keys/new", h.KeyNew, admin, ""},
		{http.MethodGet, "/keys/:id/created", h.KeyCreated, admin, ""},
		{http.MethodPost, "/keys", h.KeyCreate, admin, ""},
		{http.MethodGet, "/keys/:id", h.KeyShow, admin, ""},
		{http.MethodGet, "/keys/:id/callback-secret/rotate", h.KeyCallbackRotateConfirm, admin, ""},
		{http.MethodPost, "/keys/:id/callback-secret/rotate", h.KeyCallbackRotate, admin, ""},
		{http.MethodGet, "/keys/:id/revoke", h.KeyRevokeConfirm, admin, ""},
		{http.MethodPost, "/keys/:id/revoke", h.KeyRevoke, admin, ""},
		{http.MethodPost, "/keys/:id/model-limits", h.KeyModelLimits, admin, ""},
		{http.MethodPost, "/keys/:id/scopes", h.KeyScopes, admin, ""},
		{http.MethodPost, "/keys/:id/rate", h.KeyRate, admin, ""},
		{http.MethodPost, "/keys/:id/expiry", h.KeyExpiry, admin, ""},
		{http.MethodGet, "/budgets", h.BudgetList, admin, "Budgets"},
		{http.MethodPost, "/budgets/:tenant", h.BudgetEdit, admin, ""},
		{http.MethodGet, "/tools", h.ToolList, admin, "Tools"},
		{http.MethodGet, "/tools/new", h.ToolNew, admin, ""},
		{http.MethodPost, "/tools", h.ToolCreate, admin, ""},
		{http.MethodGet, "/tools/:name/edit", h.ToolEditForm, admin, ""},
		{http.MethodPost, "/owners/:object/:key", h.OwnerSet, admin, ""},
		{http.MethodPost, "/tools/:name", h.ToolUpdate, admin, ""},
		{http.MethodPost, "/tools/:name/enable", h.ToolEnable, admin, ""},
		{http.MethodGet, "/tools/:name/disable", h.ToolDisableConfirm, admin, ""},
		{http.MethodPost, "/tools/:name/disable", h.ToolDisable, admin, ""},
		// Model deployments of the chat gateway, and its calls.
		{http.MethodGet, "/models", h.ModelList, admin, "Models"},
		{http.MethodPost, "/models", h.ModelCreate, admin, ""},
		{http.MethodPost, "/model-aliases", h.ModelAliasSave, admin, ""},
		{http.MethodPost, "/model-allowed-hosts", h.ModelAllowedHosts, admin, ""},
		{http.MethodGet, "/models/:name/edit", h.ModelEditForm, admin, ""},
		{http.MethodPost, "/models/:name", h.ModelUpdate, admin, ""},
		{http.MethodPost, "/models/:name/enable", h.ModelEnable, admin, ""},
		{http.MethodGet, "/models/:name/disable", h.ModelDisableConfirm, admin, ""},
		{http.MethodPost, "/models/:name/disable", h.ModelDisable, admin, ""},
		// Upstream MCP servers of the /mcp door, their tools and classes.
		{http.MethodGet, "/mcp-servers", h.MCPServerList, admin, "MCP servers"},
		{http.MethodPost, "/mcp-servers", h.MCPServerCreate, admin, ""},
		{http.MethodPost, "/mcp-servers/:name/discover", h.MCPServerDiscover, admin, ""},
		{http.MethodPost, "/mcp-servers/:name/classify", h.MCPToolClassify, admin, ""},
		{http.MethodGet, "/mcp-servers/:name/edit", h.MCPServerEditForm, admin, ""},
		{http.MethodPost, "/mcp-servers/:name/edit", h.MCPServerUpdate, admin, ""},
		// Notifications: admins choose where approvers and on-call are
		// told (channels, routes) and send tests.
		{http.MethodGet, "/notifications", h.NotificationList, admin, "Notifications"},
		{http.MethodPost, "/notifications/channels", h.NotificationChannelCreate, admin, ""},
		{http.MethodPost, "/notifications/channels/:name/edit", h.NotificationChannelUpdate, admin, ""},
		{http.MethodPost, "/notifications/channels/:name/test", h.NotificationChannelTest, admin, ""},
		{http.MethodGet, "/notifications/channels/:name/delete", h.NotificationChannelDeleteConfirm, admin, ""},
		{http.MethodPost, "/notifications/channels/:name/delete", h.NotificationChannelDelete, admin, ""},
		{http.MethodPost, "/notifications/routes", h.NotificationRouteAdd, admin, ""},
		{http.MethodGet, "/notifications/routes/:id/delete", h.NotificationRouteDeleteConfirm, admin, ""},
		{http.MethodPost, "/notifications/routes/:id/delete", h.NotificationRouteDelete, admin, ""},
		{http.MethodPost, "/notifications/settings", h.NotificationSettingsSet, admin, ""},
		{http.MethodGet, "/releases", h.ReleaseList, oncallAdmin, "Releases"},
		{http.MethodGet, "/releases/rollback", h.ReleaseRollbackConfirm, oncallAdmin, ""},
		{http.MethodPost, "/releases/rollback", h.ReleaseRollback, oncallAdmin, ""},
		{http.MethodPost, "/releases/publish", h.ReleasePublish, admin, ""},
		{http.MethodGet, "/releases/activate", h.ReleaseActivateConfirm, admin, ""},
		{http.MethodPost, "/releases/activate", h.ReleaseActivate, admin, ""},
		{http.MethodGet, "/releases/replays/:id", h.ReleaseReplayShow, oncallAdmin, ""},
		{http.MethodPost, "/releases/canary", h.ReleaseCanaryStart, oncallAdmin, ""},
		{http.MethodPost, "/releases/canary/rollback", h.ReleaseCanaryRollback, oncallAdmin, ""},
		{http.MethodPost, "/releases/canary/promote", h.ReleasePromote, oncallAdmin, ""},
		{http.MethodGet, "/runbooks", h.RunbookList, oncallAdmin, "Runbooks"},
		{http.MethodGet, "/runbooks/:id", h.RunbookShow, oncallAdmin, ""},
		{http.MethodGet, "/runbooks/:id/actions/:action", h.RunbookActionConfirm, oncallAdmin, ""},
		{http.MethodPost, "/runbooks/:id/actions/:action", h.RunbookAction, oncallAdmin, ""},
		{http.MethodGet, "/runbooks/:id/runs/:run", h.RunbookRunShow, oncallAdmin, ""},
		{http.MethodPost, "/runbooks/:id/publish", h.RunbookPublish, admin, ""},
		// Console sessions: admins (of all tenants) see who is signed in
		// and sign people out.
		{http.MethodGet, "/sessions", h.SessionList, admin, "Sessions"},
		{http.MethodGet, "/sessions/:id/revoke", h.SessionRevokeConfirm, admin, ""},
		{http.MethodPost, "/sessions/:id/revoke", h.SessionRevoke, admin, ""},
		{http.MethodGet, "/sessions/users/:principal/revoke", h.SessionRevokeAllConfirm, admin, ""},
		{http.MethodPost, "/sessions/users/:principal/revoke", h.SessionRevokeAll, admin, ""},
		{http.MethodGet, "/traces", h.TraceList, readers, "Traces"},
		{http.MethodGet, "/traces/:id", h.TraceDetail, readers, ""},
	}
	// Decisions and reversals are work for the agent runtime: without one
	// (a console-only Warden) they are not offered at all.
	if s.runtime != nil {
		routes = append(routes,
			route{http.MethodPost, "/approvals/:id/decide", h.ApprovalDecide, approver, ""},
			route{http.MethodPost, "/approvals/:id/take", h.ApprovalTake, approver, ""},
			route{http.MethodPost, "/approvals/:id/release", h.ApprovalRelease, approver, ""},
			route{http.MethodGet, "/approvals/:id/reverse", h.ApprovalReverseConfirm, approvals.ReverseRoles, ""},
			route{http.MethodPost, "/approvals/:id/reverse", h.ApprovalReverse, approvals.ReverseRoles, ""},
			// Retrying an execution that was blocked before anything was
			// sent, once the block is lifted: on-call and admins.
			route{http.MethodPost, "/approvals/:id/retry", h.ApprovalRetry, execution.RetryRoles, ""},
			// Kill switches: on-call (and admins) switch a tool or skill
			// off in an incident, and on again.
			route{http.MethodGet, "/switches", h.SwitchList, oncallAdmin, "Kill switches"},
			route{http.MethodGet, "/switches/:kind/:name/off", h.SwitchOffConfirm, oncallAdmin, ""},
			route{http.MethodPost, "/switches/:kind/:name/off", h.SwitchOff, oncallAdmin, ""},
			route{http.MethodPost, "/switches/:kind/:name/on", h.SwitchOn, oncallAdmin, ""},
			route{http.MethodPost, "/switches/tool/:name/tenants/:tenant/on", h.SwitchOnForTenant, oncallAdmin, ""},
			// Skills: what each SKILL.md says, where it came from, its hash.
			route{http.MethodGet, "/skills", h.SkillList, oncallAdmin, "Skills"},
			route{http.MethodGet, "/skills/:name", h.SkillShow, oncallAdmin, ""},
			// Alerts: on-call (and admins) see what fires, with its
			// runbook; admins set each skill's thresholds.
			// Replaying a candidate release dry-runs recorded journeys
			// through the runtime's router and skills.
			route{http.MethodPost, "/releases/replays", h.ReleaseReplayRun, oncallAdmin, ""},
			// Route labels (docs/releases.md): on-call and admins say
			// whether a journey went to the right skill; the day's sample
			// to label; the labelled set for offline evaluation.
			route{http.MethodPost, "/traces/:id/label", h.TraceLabel, oncallAdmin, ""},
			route{http.MethodGet, "/labels", h.LabelQueue, oncallAdmin, "Labelling"},
			route{http.MethodPost, "/labels/settings", h.LabelSettingsSet, admin, ""},
			route{http.MethodGet, "/labels/export.jsonl", h.LabelExport, oncallAdmin, ""},
			// The tool dependencies' breakers and bulkheads.
			route{http.MethodGet, "/dependencies", h.DependencyList, oncallAdmin, "Dependencies"},
			route{http.MethodGet, "/alerts", h.AlertList, oncallAdmin, "Alerts"},
			route{http.MethodGet, "/alerts/:id", h.AlertShow, oncallAdmin, ""},
			route{http.MethodPost, "/alerts/:id/ack", h.AlertAck, oncallAdmin, ""},
			route{http.MethodPost, "/alerts/rules/:skill", h.AlertRuleSet, admin, ""},
		)
	}
	return routes
}

// routes registers every route of the server.
func (s *Server) routes() {
	e := s.echo
	pages := s.consoleRoutes()

	// Open to everyone: operations, assets, sign-in.
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	s.modelMetrics = newModelMetrics()
	e.GET("/metrics", s.metricsHandler())
	e.GET("/static/*", echo.WrapHandler(http.StripPrefix("/static/", static.Handler())))
	if s.devIdP != nil {
		e.Any(devIdPPath+"/*", echo.WrapHandler(s.devIdP))
	}

	// Browser agents on the configured origins may call /v1/* (cors.go).
	if mw := s.cors(); mw != nil {
		e.Use(mw)
	}

	// The agents' JSON API: virtual keys, no cookies, no CSRF.
	if s.gateway != nil && s.runtime != nil {
		api := &handlers.API{DB: s.db, Gateway: s.gateway, Runtime: s.runtime, Execution: s.execution}
		// Work is admitted up to a global limit and shed beyond it (503,
		// Retry-After) before latency collapses; reads and long polls are
		// not counted, and the console is never shed.
		shed, shedChat := s.shedAPI()
		e.POST("/v1/journeys", api.CreateJourney, shed)
		e.GET("/v1/journeys/:id", api.GetJourney)
		e.POST("/v1/actions", api.Propose, shed)
		e.GET("/v1/actions/:id", api.GetAction)
		e.POST("/v1/actions/:id/result", api.Result, shed)
		e.POST("/v1/actions/:id/cancel", api.Cancel, shed)
		// The model gateway (OpenAI-compatible): a call is counted until
		// its answer starts; each deployment bounds its own calls in
		// flight, so a long stream is not counted once it flows.
		mg := s.models
		if mg == nil {
			rd, _ := s.redactor.(*redact.Redactor)
			mg = models.NewGateway(s.db, s.sealer(), rd, s.log)
		}
		mg.SetObserver(s.modelMetrics)
		chat := &handlers.ModelAPI{Gateway: s.gateway, Models: mg}
		e.POST("/v1/chat/completions", chat.ChatCompletions, shedChat)
		e.POST("/v1/embeddings", chat.Embeddings, shedChat)
		e.POST("/v1/responses", chat.Responses, shedChat)
		e.GET("/v1/responses/:id", chat.GetResponse)
		e.DELETE("/v1/responses/:id", chat.DeleteResponse)
		e.GET("/v1/models", chat.ListModels)
		e.GET("/v1/models/:id", chat.GetModel)

		// The MCP door (docs/mcp.md): upstream MCP servers' tools under
		// the keys' mcp: scopes. The door is stateless, so GET and DELETE
		// answer 405 from the SDK; they are routed so that the answer is
		// the protocol's, not Warden's 404.
		door := &handlers.MCPAPI{Gateway: s.gateway, Door: s.mcpGateway().Handler(), Draining: s.draining.Load}
		e.POST("/mcp", door.Serve, shedChat)
		e.GET("/mcp", door.Serve)
		e.DELETE("/mcp", door.Serve)
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

// mayOpen reports whether p may open the console page at target (a path,
// with or without a query): the GET route of the table that matches it
// admits one of p's roles. Static segments win over parameters, as in the
// router, so /keys/new is judged by its own route and not by /keys/:id.
func mayOpen(routes []route, p *identity.Principal, target string) bool {
	if p == nil {
		return false
	}
	path, _, _ := strings.Cut(target, "?")
	var best *route
	bestParams := -1
	for i := range routes {
		r := &routes[i]
		if r.method != http.MethodGet {
			continue
		}
		if n, ok := matchRoute(r.path, path); ok && (best == nil || n < bestParams) {
			best, bestParams = r, n
		}
	}
	return best != nil && allowed(p, best.roles)
}

// matchRoute reports whether path fits the route pattern (":name"
// segments match any one non-empty segment), and with how many parameters.
func matchRoute(pattern, path string) (params int, ok bool) {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return 0, false
	}
	for i, seg := range ps {
		switch {
		case strings.HasPrefix(seg, ":"):
			if xs[i] == "" {
				return 0, false
			}
			params++
		case seg != xs[i]:
			return 0, false
		}
	}
	return params, true
}

// sealer keeps keys' callback secrets sealed: the runtime's, or none
// without a runtime (then creating a key fails).
// mcpGateway is the MCP gateway the /mcp door and the MCP servers page
// share, built on first use.
func (s *Server) mcpGateway() *mcpservers.Gateway {
	if s.mcp == nil {
		rd, _ := s.redactor.(*redact.Redactor)
		s.mcp = mcpservers.NewGateway(s.db, s.sealer(), rd, s.log)
		s.mcp.SetConsoleURL(strings.TrimRight(s.cfg.PublicURL.String(), "/"))
	}
	return s.mcp
}

// notifier is the runtime's notification service, or one built for the
// Notifications page (its Send test) when none was given; nil without a
// sealer (a console-only Warden).
func (s *Server) notifier() *notify.Service {
	if s.notify == nil && s.sealer() != nil {
		s.notify = notify.New(notify.Options{DB: s.db, Sealer: s.sealer(), Log: s.log,
			BaseURL: s.cfg.PublicURL.String(), AllowInternal: s.cfg.DevMode()})
	}
	return s.notify
}

func (s *Server) sealer() *seal.Sealer {
	if s.runtime != nil {
		return s.runtime.Sealer()
	}
	return nil
}
