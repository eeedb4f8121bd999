package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/signin"
	"github.com/wardenhq/warden/views"
)

// loginPage shows the sign-in page, or sends a signed-in user home.
func (s *Server) loginPage(c echo.Context) error {
	if handlers.CurrentPrincipal(c) != nil {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	v := s.loginView(c.QueryParam("next"))
	v.SignedOut = c.QueryParam("signed_out") == "1"
	return handlers.Render(c, http.StatusOK, handlers.PageFor(c, "Sign in"), views.Login(v))
}

func (s *Server) loginView(next string) views.LoginView {
	name := "development identity provider"
	if !s.cfg.DevMode() {
		if u, err := url.Parse(s.cfg.OIDCIssuer); err == nil {
			name = u.Host
		}
	}
	return views.LoginView{ProviderReady: s.auth.ready(), ProviderName: name, Next: safeNext(next)}
}

// loginStart redirects to the identity provider with fresh state, nonce
// and PKCE challenge, remembered in the session.
func (s *Server) loginStart(c echo.Context) error {
	ls, err := s.auth.start()
	if err != nil {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	sess := s.session(c)
	sess.Values[sessState] = ls.state
	sess.Values[sessNonce] = ls.nonce
	sess.Values[sessVerifier] = ls.verifier
	sess.Values[sessNext] = safeNext(c.QueryParam("next"))
	sess.Values[sessStarted] = time.Now().Unix()
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.Redirect(http.StatusFound, ls.authURL)
}

// loginCallback finishes the flow: it verifies everything, records the
// principal and the login in one transaction, and rotates the session.
func (s *Server) loginCallback(c echo.Context) error {
	ctx := c.Request().Context()
	sess := s.session(c)
	pending := pendingLogin{}
	if started, ok := sess.Values[sessStarted].(int64); ok && time.Since(time.Unix(started, 0)) < loginMaxAge {
		pending.state, _ = sess.Values[sessState].(string)
		pending.nonce, _ = sess.Values[sessNonce].(string)
		pending.verifier, _ = sess.Values[sessVerifier].(string)
	}
	next, _ := sess.Values[sessNext].(string)
	// State, nonce and verifier are single use, whatever happens next.
	for _, k := range []string{sessState, sessNonce, sessVerifier, sessNext, sessStarted} {
		delete(sess.Values, k)
	}

	p, err := s.auth.finish(ctx, pending, c.Request())
	if err != nil {
		var le *loginError
		if !errors.As(err, &le) {
			return err
		}
		if err := sess.Save(c.Request(), c.Response()); err != nil {
			return err
		}
		if err := s.auditLoginFailure(ctx, le); err != nil {
			return err
		}
		s.log.WarnContext(ctx, "login refused", "reason", le.Reason, "detail", le.Detail)
		v := s.loginView(next)
		v.Error = le.User
		return handlers.Render(c, http.StatusUnauthorized, handlers.PageFor(c, "Sign in"), views.Login(v))
	}

	if p.ID, err = signin.Login(ctx, s.db, p); err != nil {
		return err
	}

	// Rotate: nothing from before the login survives, and the session gets
	// a new id.
	clearSession(sess)
	raw, _ := json.Marshal(p)
	sess.Values[sessPrincipal] = string(raw)
	sess.Values[sessID] = randomToken()
	sess.Values[sessLoginAt] = time.Now().Unix()
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "login", "principal", p.ID, "roles", strings.Join(p.Roles, ","))
	if next == "" {
		next = "/"
	}
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) auditLoginFailure(ctx context.Context, le *loginError) error {
	return signin.Refused(ctx, s.db, le.Reason, s.redactDetails(map[string]any{"reason": le.Reason, "detail": le.Detail}))
}

// logout clears the session and records the logout.
func (s *Server) logout(c echo.Context) error {
	ctx := c.Request().Context()
	sess := s.session(c)
	if p := handlers.CurrentPrincipal(c); p != nil {
		if err := signin.Logout(ctx, s.db, p.ID); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "logout", "principal", p.ID)
	}
	clearSession(sess)
	sess.Options = &sessions.Options{Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.cfg.Secure(), SameSite: http.SameSiteLaxMode}
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/login?signed_out=1")
}

// safeNext accepts only a local path, so the login cannot be turned into an
// open redirect.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return ""
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f {
			return "" // browsers drop tabs and newlines: "/\t/evil" becomes "//evil"
		}
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "//") {
		return ""
	}
	if strings.HasPrefix(next, "/auth/") {
		return ""
	}
	return next
}
