// Package handlers holds Warden's HTTP handlers, one file per action. Each
// handler follows the same steps: load the user, check what it may do,
// parse and validate input, call the domain, render or redirect. Business
// rules live in domain packages, not here.
package handlers

import (
	"bytes"
	"context"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/sessions"
	"github.com/wardenhq/warden/views"
)

// Console serves the signed-in console. Its methods are the handlers, one
// file per action; web/routes.go lists them with the roles they need.
type Console struct {
	DB *store.DB
	// Runtime runs journeys (traces, replays, the skills a key may be
	// scoped to) and Execution decides, executes and reverses actions.
	// Without them (a console-only Warden) the routes that need them are
	// not registered.
	Runtime   *journeys.Service
	Execution *execution.Service
	Sealer    *seal.Sealer // seals keys' callback secrets
	// MCP discovers upstream MCP servers' tools (the MCP servers page).
	MCP *mcpservers.Gateway
	// Notify keeps notification channels and sends their tests (the
	// Notifications page).
	Notify *notify.Service
	// Runbooks are the loaded runbook documents.
	Runbooks *runbooks.Set
	Flash    Flash // one-time values across a redirect (a new key's secret)
	// SessionPolicy is how long console sessions live, and SessionClock
	// the sessions' clock (the admin's session pages).
	SessionPolicy sessions.Policy
	SessionClock  func() time.Time
	// StatusView is what this process sees, for the status page.
	StatusView func(ctx context.Context, p *identity.Principal) (views.StatusView, error)
	// Redactor redacts what people type that is kept for good (a model
	// deployment's switch reason); nil keeps it as typed.
	Redactor *redact.Redactor
	// BreakGlass lets one admin apply a loosening change at once with a
	// reason (WARDEN_BREAK_GLASS, docs/changes.md).
	BreakGlass bool
}

// redact is s redacted with the console's redactor.
func (h *Console) redact(s string) string {
	if h.Redactor == nil {
		return s
	}
	return h.Redactor.String(s)
}

// SkillNames names the skills a key's scopes may list: the runtime's, or
// none without one.
func (h *Console) SkillNames(ctx context.Context) ([]string, error) {
	if h.Runtime == nil {
		return nil, nil
	}
	return h.Runtime.SkillNames(ctx)
}

// Context keys shared with the web package's middleware.
const (
	keyPrincipal = "warden.principal"
	keyPage      = "warden.page"
)

// SetPrincipal records the signed-in principal for the request.
func SetPrincipal(c echo.Context, p *identity.Principal) { c.Set(keyPrincipal, p) }

// CurrentPrincipal is the signed-in principal, or nil.
func CurrentPrincipal(c echo.Context) *identity.Principal {
	p, _ := c.Get(keyPrincipal).(*identity.Principal)
	return p
}

// SetPage records the layout data (user, CSRF token, navigation) the
// middleware prepared for this request.
func SetPage(c echo.Context, p views.Page) { c.Set(keyPage, p) }

// PageFor returns the request's layout data with the given title.
func PageFor(c echo.Context, title string) views.Page {
	p, _ := c.Get(keyPage).(views.Page)
	p.Title = title
	return p
}

// Render writes a full console page: the layout around content. It renders
// into a buffer first so a template failure becomes a clean 500.
func Render(c echo.Context, status int, page views.Page, content templ.Component) error {
	return RenderComponent(c, status, views.Layout(page, content))
}

// RenderComponent writes one component with the given status.
func RenderComponent(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// Forbidden is the error a handler returns when the user may not do this.
func Forbidden(msg string) error { return problem.Forbidden("forbidden", msg) }
