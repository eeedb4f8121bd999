package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

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
	// Back from the provider's end-session endpoint, the flow cookie says
	// the user signed out (the provider's redirect carries no such word).
	signedOut, err := sessionFlash{s}.Take(c, flashSignedOut)
	if err != nil {
		return err
	}
	v.SignedOut = c.QueryParam("signed_out") == "1" || signedOut != ""
	return handlers.Render(c, http.StatusOK, handlers.PageFor(c, "Sign in"), views.Login(v))
}

const flashSignedOut = "signed_out"

func (s *Server) loginView(next string) views.LoginView {
	name := "development identity provider"
	if !s.cfg.DevMode() {
		if u, err := url.Parse(s.cfg.OIDCIssuer); err == nil {
			name = u.Host
		}
	}
	st := s.auth.status()
	v := views.LoginView{ProviderReady: st.State == providerOK, ProviderName: name, Next: safeNext(next)}
	if st.State == providerIssuerMismatch {
		v.IssuerMismatch = &views.IssuerMismatch{Configured: s.auth.issuer, Announced: st.Discovered}
	}
	return v
}

// loginStart redirects to the identity provider with fresh state, nonce
// and PKCE challenge. The sign-in is remembered in the flow cookie under
// its state, next to any other sign-in in progress in another tab.
func (s *Server) loginStart(c echo.Context) error {
	// Right after start-up this waits for the discovery in progress; when
	// there is none or it does not end in time, the sign-in page says why
	// (unreachable, or an issuer mismatch).
	ls, err := s.auth.start(c.Request().Context())
	if err != nil {
		s.log.WarnContext(c.Request().Context(), "sign-in refused: the identity provider is not discovered", "state", s.auth.status().State)
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	if !s.cfg.DevMode() {
		if err := s.auth.reachable(c.Request().Context()); err != nil {
			s.log.WarnContext(c.Request().Context(), "sign-in refused: the identity provider does not answer", "err", err)
			v := s.loginView(c.QueryParam("next"))
			v.ProviderReady = false
			return handlers.Render(c, http.StatusServiceUnavailable, handlers.PageFor(c, "Sign in"), views.Login(v))
		}
	}
	now := s.now()
	f := s.flow(c)
	m := pendingLogins(f, now)
	m[ls.state] = pendingLogin{Nonce: ls.nonce, Verifier: ls.verifier, Next: safeNext(c.QueryParam("next")), Started: now.UnixNano()}
	setPendingLogins(f, m)
	if err := f.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.Redirect(http.StatusFound, ls.authURL)
}

// loginCallback finishes the flow. The state comes first: a callback whose
// state names no sign-in in progress in this browser is refused at once,
// changes nothing (another tab's sign-in goes on) and writes nothing to
// the audit trail; it is counted and logged. Only then does an ?error=
// from the provider count. Then everything is verified, and the principal,
// the new session and the sign-in are recorded in one transaction.
func (s *Server) loginCallback(c echo.Context) error {
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	now := s.now()
	f := s.flow(c)
	m := pendingLogins(f, now)
	state := q.Get("state")
	pending, ok := m[state]
	if state == "" || !ok {
		n := s.refusedCallbacks.Add(1)
		s.log.WarnContext(ctx, "sign-in callback refused: no sign-in in progress for its state; not audited",
			"request_id", requestID(c), "has_state", state != "", "refused_total", n)
		v := s.loginView("")
		v.Error = "That sign-in link has expired, was already used, or was started in another browser. Please sign in again."
		return handlers.Render(c, http.StatusBadRequest, handlers.PageFor(c, "Sign in"), views.Login(v))
	}
	// The sign-in in progress is single use, whatever happens next.
	delete(m, state)
	setPendingLogins(f, m)
	if err := f.Save(c.Request(), c.Response()); err != nil {
		return err
	}

	var got verified
	var err error
	if q.Get("error") != "" {
		err = s.auth.providerRefusal(q)
	} else {
		got, err = s.auth.finish(ctx, pending, q)
	}
	if err != nil {
		var le *loginError
		if !errors.As(err, &le) {
			return err
		}
		if err := s.auditLoginFailure(c, le); err != nil {
			return err
		}
		v := s.loginView(pending.Next)
		v.Error = le.User
		return handlers.Render(c, http.StatusUnauthorized, handlers.PageFor(c, "Sign in"), views.Login(v))
	}

	// Rotate: the browser's previous session (if any) ends and a new one
	// with a new token starts, in the transaction that records the sign-in.
	a := signin.Attempt{Principal: got.principal, IDToken: got.idToken, ClientAddr: clientAddr(c)}
	if old := currentSession(c); old != nil {
		a.Replaces = old.ID
	}
	in, err := signin.Login(ctx, s.db, a, now, s.policy)
	if err != nil {
		return err
	}
	s.setSessionCookie(c, in.Token)
	s.log.InfoContext(ctx, "login", "principal", in.PrincipalID, "session", in.SessionID, "roles", strings.Join(got.principal.Roles, ","))
	next := pending.Next
	if next == "" {
		next = "/"
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// auditLoginFailure logs a refused sign-in and writes it to the audit
// trail, at most a burst per client address; past it, the address's
// refusals are summed up in one event a minute (failureLimiter).
func (s *Server) auditLoginFailure(c echo.Context, le *loginError) error {
	ctx := c.Request().Context()
	write, summary := s.failures.allow(clientAddr(c), s.now())
	s.log.WarnContext(ctx, "login refused", "request_id", requestID(c), "reason", le.Reason, "detail", le.Detail, "audited", write)
	if summary > 0 {
		if err := signin.RefusedSuppressed(ctx, s.db, summary); err != nil {
			return err
		}
	}
	if !write {
		return nil
	}
	return signin.Refused(ctx, s.db, le.Reason, s.redactDetails(map[string]any{"reason": le.Reason, "detail": le.Detail}))
}

// logout ends the session on the server and records the sign-out. When
// the provider advertises an end-session endpoint, the browser goes there
// next (RP-initiated logout, with the session's ID token as
// id_token_hint), so the provider's own session ends too and the next
// "Continue" asks who is signing in; it comes back to the sign-in page.
//
// The browser gets there from a page of Warden's (views.SignOut), not by
// a redirect: a browser applies CSP form-action to every redirect of a
// form submission, and providers send the browser on through logout pages
// of other origins (Hydra's logout UI, Keycloak's, Okta's), which
// form-action 'self' refuses; the navigation would be aborted and the
// provider's session survive.
func (s *Server) logout(c echo.Context) error {
	ctx := c.Request().Context()
	var idToken string
	if p, sess := handlers.CurrentPrincipal(c), currentSession(c); p != nil && sess != nil {
		var err error
		if idToken, err = signin.Logout(ctx, s.db, p.ID, sess.ID, s.now()); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "logout", "principal", p.ID, "session", sess.ID)
	}
	s.clearSessionCookie(c)
	if end := s.auth.endSessionURL(idToken, s.postLogoutURL()); end != "" {
		if err := (sessionFlash{s}).Put(c, flashSignedOut, "1"); err != nil {
			return err
		}
		// The page carries the ID token in its link: never kept.
		c.Response().Header().Set("Cache-Control", "no-store")
		page := handlers.PageFor(c, "Signing out")
		page.User, page.Nav, page.CSRF = nil, nil, ""
		v := views.SignOutView{ProviderName: s.loginView("").ProviderName, EndSessionURL: end}
		return handlers.Render(c, http.StatusOK, page, views.SignOut(v))
	}
	return c.Redirect(http.StatusSeeOther, "/login?signed_out=1")
}

// postLogoutURL is where the provider sends the browser after
// RP-initiated logout: the sign-in page. Register it at the provider as a
// post-logout redirect URI.
func (s *Server) postLogoutURL() string {
	return strings.TrimRight(s.cfg.PublicURL.String(), "/") + "/login"
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
