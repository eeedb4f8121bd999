package web

import (
	"context"
	"crypto/hmac"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/sessions"
	"github.com/wardenhq/warden/views"
)

// Context keys of this package's middleware.
const (
	keySession = "warden.session" // *sessions.Session
	keyFlow    = "warden.flow"    // *gsessions.Session, the flow cookie
	keyCSRF    = "warden.csrf"    // the session's CSRF token
)

// secureHeaders sets the headers every response carries. The console runs
// no inline script, so the policy allows scripts and styles from Warden
// itself only.
func (s *Server) secureHeaders() echo.MiddlewareFunc {
	// Forms post to Warden only. Sign-out leaves through a page of its own
	// (views.SignOut), not a redirect from the form's answer, so no
	// provider's origin needs to be allowed here; sign-in starts with a
	// link (GET /auth/login), to which form-action does not apply.
	csp := strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' data:",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
	secure := s.cfg.Secure()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("X-Frame-Options", "DENY")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			if secure {
				h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
			}
			return next(c)
		}
	}
}

// requestID gives every request a new id, "req_" + a ULID. An id a client
// sends in X-Request-Id is not taken: it is stored with journeys and
// echoed in answers, and a client could put personal data in it. The
// form survives redaction, so log lines and journeys carry the same id.
func (s *Server) requestID() echo.MiddlewareFunc {
	ids := middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: func() string { return "req_" + store.NewID() }})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withID := ids(next)
		return func(c echo.Context) error {
			c.Request().Header.Del(echo.HeaderXRequestID)
			return withID(c)
		}
	}
}

// statusClientClosedRequest is what a request whose client hung up
// before its answer is logged with (nginx's 499); the client never reads
// it.
const statusClientClosedRequest = 499

// clientGone reports whether the request's client hung up: its context
// ended without a cause of Warden's own (a shutdown cancels requests with
// runtime.ErrShuttingDown).
func clientGone(c echo.Context) bool {
	ctx := c.Request().Context()
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

// clientClosed answers 499 instead of the 500 or 503 a handler wrote
// because its client hung up and its context ended (a journey cancelled,
// a read that stopped): the client's leaving is not Warden's failure and
// is not logged as an error. What a handler stored for replay (an
// Idempotency-Key's answer) keeps its own status.
func (s *Server) clientClosed() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			res := c.Response()
			res.Before(func() {
				if (res.Status == http.StatusInternalServerError || res.Status == http.StatusServiceUnavailable) && clientGone(c) {
					res.Status = statusClientClosedRequest
				}
			})
			return next(c)
		}
	}
}

// requestLog logs one line per request with its id, the path without the
// query string (it can carry authorization codes), status and duration.
func (s *Server) requestLog() echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus:    true,
		LogURIPath:   true,
		LogMethod:    true,
		LogLatency:   true,
		LogRequestID: true,
		LogError:     true,
		HandleError:  true,
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return p == "/healthz" || p == "/readyz" || strings.HasPrefix(p, "/static/")
		},
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if v.Status >= 500 {
				level = slog.LevelError
			}
			s.log.LogAttrs(c.Request().Context(), level, "request",
				slog.String("request_id", v.RequestID),
				slog.String("method", v.Method),
				slog.String("path", v.URIPath),
				slog.Int("status", v.Status),
				slog.Duration("duration", v.Latency.Round(time.Microsecond)),
			)
			return nil
		},
	})
}

// loadSession makes the signed-in principal of a live server-side session
// the request's user. The cookie holds only the session's token; a token
// that names no live session (unknown, signed out, revoked, idle, past its
// lifetime) is no session. The session's last-seen time is written at most
// once a minute.
func (s *Server) loadSession() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if noSession(c.Request().URL.Path) {
				return next(c)
			}
			ck, err := c.Cookie(s.sessionCookie)
			if err != nil || ck.Value == "" {
				return next(c)
			}
			ctx := c.Request().Context()
			now := s.now()
			sess, err := sessions.Lookup(ctx, s.db.Read(), ck.Value, now, s.policy)
			if errors.Is(err, sessions.ErrNotFound) {
				return next(c)
			}
			if err != nil {
				return err
			}
			c.Set(keySession, &sess)
			handlers.SetSessionID(c, sess.ID)
			p := sess.Principal
			handlers.SetPrincipal(c, &p)
			if sess.TouchDue(now) {
				if err := sessions.Touch(ctx, s.db, sess.ID, now); err != nil {
					s.log.WarnContext(ctx, "session last-seen not recorded", "request_id", requestID(c), "err", err)
				}
			}
			return next(c)
		}
	}
}

// noSession lists the paths that never need a console session: health
// probes (liveness checks no dependency, the database included), assets,
// the agents' API and the development provider.
func noSession(path string) bool {
	return path == "/healthz" || path == "/readyz" || strings.HasPrefix(path, "/static/") ||
		agentPath(path) || strings.HasPrefix(path, devIdPPath+"/")
}

// agentPath reports whether path is the agents' API: /v1/... and the MCP
// door /mcp, both under virtual keys (no cookies, no CSRF).
func agentPath(path string) bool { return strings.HasPrefix(path, "/v1/") || path == "/mcp" }

// csrf guards every state-changing console request twice. The browser's
// own word first: a request a browser marks as coming from another site
// (Sec-Fetch-Site cross-site or same-site, which includes a sibling
// subdomain), or whose Origin is another host, is refused. Then the token,
// in the form field _csrf or the X-CSRF-Token header, must be the one
// derived from the request's server-side session (csrfToken); without a
// session there is no valid token. A refusal is a 403 and the handler
// never runs. The agents' API (bearer keys, no cookies) and the
// development provider's own endpoints (its token endpoint is called
// server to server) are not console forms.
func (s *Server) csrf() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if agentPath(r.URL.Path) || (s.cfg.DevMode() && strings.HasPrefix(r.URL.Path, devIdPPath+"/")) {
				return next(c)
			}
			want := ""
			if sess := currentSession(c); sess != nil {
				want = s.csrfToken(sess.ID)
			}
			c.Set(keyCSRF, want)
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
				return next(c)
			}
			got := c.FormValue("_csrf")
			if got == "" {
				got = r.Header.Get("X-CSRF-Token")
			}
			reason := ""
			switch site := r.Header.Get("Sec-Fetch-Site"); {
			case site == "cross-site" || site == "same-site":
				reason = "sec_fetch_site"
			case !sameOrigin(r, s.cfg.PublicURL.Host):
				reason = "origin"
			case want == "":
				reason = "no_session"
			case !hmac.Equal([]byte(got), []byte(want)):
				reason = "token"
			}
			if reason != "" {
				s.log.WarnContext(r.Context(), "csrf check failed", "request_id", requestID(c), "path", r.URL.Path, "reason", reason)
				return echo.NewHTTPError(http.StatusForbidden, "This form has expired or did not come from Warden. Reload the page and try again.")
			}
			return next(c)
		}
	}
}

// sameOrigin reports whether a request's Origin header, when it has one,
// names the host the request was sent to or Warden's public host.
func sameOrigin(r *http.Request, publicHost string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && (strings.EqualFold(u.Host, r.Host) || strings.EqualFold(u.Host, publicHost))
}

// page prepares the layout data for console pages.
func (s *Server) page(routes []route) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			user := handlers.CurrentPrincipal(c)
			token, _ := c.Get(keyCSRF).(string)
			p := views.Page{User: user, CSRF: token, DevMode: s.cfg.DevMode(), Active: c.Path(), RequestID: requestID(c), BreakGlass: s.cfg.BreakGlass}
			if user != nil {
				p.Nav = navFor(routes, user)
				p.Opens = func(target string) bool { return mayOpen(routes, user, target) }
			}
			handlers.SetPage(c, p)
			return next(c)
		}
	}
}

// requireLogin sends anonymous users to the login page (GET) or answers
// 401 (anything else).
func requireLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if handlers.CurrentPrincipal(c) != nil {
			return next(c)
		}
		if c.Request().Method == http.MethodGet {
			return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
		}
		return echo.NewHTTPError(http.StatusUnauthorized, "Sign in first.")
	}
}

// requireRole lets the request through only for principals holding one of
// the roles.
func requireRole(roles ...string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := handlers.CurrentPrincipal(c)
			if p == nil || !p.HasAnyRole(roles...) {
				return handlers.Forbidden(needsRoles(roles))
			}
			return next(c)
		}
	}
}

func allowed(p *identity.Principal, roles []string) bool {
	return len(roles) == 0 || p.HasAnyRole(roles...)
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
