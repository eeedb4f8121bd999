package web

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

const keySession = "warden.session"

// secureHeaders sets the headers every response carries. The console runs
// no inline script, so the policy allows scripts and styles from Warden
// itself only.
func (s *Server) secureHeaders() echo.MiddlewareFunc {
	formAction := "'self'"
	if !s.cfg.DevMode() {
		if u, err := url.Parse(s.cfg.OIDCIssuer); err == nil {
			formAction += " " + u.Scheme + "://" + u.Host
		}
	}
	csp := strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' data:",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action " + formAction,
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

// loadSession decodes the session cookie and, when it holds a principal,
// makes it the request's user. A cookie that fails to decode (tampered,
// expired, old keys) is treated as no session.
func (s *Server) loadSession() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			sess, err := s.sessions.Get(c.Request(), sessionCookie)
			if err != nil {
				sess, _ = s.sessions.New(c.Request(), sessionCookie)
			}
			c.Set(keySession, sess)
			if p := sessionPrincipal(sess); p != nil {
				handlers.SetPrincipal(c, p)
			}
			return next(c)
		}
	}
}

func (s *Server) session(c echo.Context) *sessions.Session {
	return c.Get(keySession).(*sessions.Session)
}

// csrf checks a token on every state-changing request: in the form field
// _csrf or the X-CSRF-Token header. A missing or wrong token is a 403 and
// the handler never runs.
func (s *Server) csrf() echo.MiddlewareFunc {
	return middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "form:_csrf,header:X-CSRF-Token",
		CookieName:     "warden_csrf",
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSecure:   s.cfg.Secure(),
		CookieSameSite: http.SameSiteLaxMode,
		ContextKey:     "csrf",
		Skipper: func(c echo.Context) bool {
			// The agents' API authenticates every request with a bearer
			// key and sends no cookies. The development identity
			// provider's own endpoints (its token endpoint is called
			// server to server) are not console forms.
			p := c.Request().URL.Path
			return strings.HasPrefix(p, "/v1/") || (s.cfg.DevMode() && strings.HasPrefix(p, devIdPPath+"/"))
		},
		ErrorHandler: func(err error, c echo.Context) error {
			s.log.WarnContext(c.Request().Context(), "csrf check failed", "request_id", requestID(c), "path", c.Request().URL.Path)
			return echo.NewHTTPError(http.StatusForbidden, "This form has expired or did not come from Warden. Reload the page and try again.")
		},
	})
}

// page prepares the layout data for console pages.
func (s *Server) page(routes []route) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			user := handlers.CurrentPrincipal(c)
			token, _ := c.Get("csrf").(string)
			p := views.Page{User: user, CSRF: token, DevMode: s.cfg.DevMode(), Active: c.Path(), RequestID: requestID(c)}
			if user != nil {
				p.Nav = navFor(routes, user)
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
