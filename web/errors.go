package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// handleError is the one place a console request's error becomes a page
// (or JSON for a client that asks for it). Handlers return a
// *problem.Error, whose kind gives the status and whose message is shown;
// the router's and middleware's own *echo.HTTPError (an unknown path, a
// missing CSRF token) keep their status; anything else is a 500. Only 5xx
// are logged as errors, with the request id; the user sees the id but
// never the internal message.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, code, msg := http.StatusInternalServerError, "internal", ""
	var title string
	var p *problem.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &p):
		status, code, msg = p.Status(), p.Code, p.Message
	case errors.As(err, &he):
		status, code = he.Code, problem.DefaultCode(he.Code)
		if m, ok := he.Message.(string); ok {
			msg = m
		}
	}
	title = http.StatusText(status)
	switch {
	case status >= 500 && clientGone(c):
		// The client hung up and the handler stopped with it: nobody reads
		// the answer (clientClosed logs it as 499), and it is no failure.
		s.log.InfoContext(c.Request().Context(), "request stopped: the client went away", "request_id", requestID(c), "path", c.Request().URL.Path)
	case p != nil && p.Kind == problem.KindUnavailable:
		// A dependency (the storage, a provider) is down: the message says
		// so in words made for users, and when to try again.
		s.log.WarnContext(c.Request().Context(), "request refused: dependency unavailable", "request_id", requestID(c), "path", c.Request().URL.Path, "code", p.Code, "err", err)
		p.SetRetryAfter(c.Response().Header())
		if p.Code == "storage_unavailable" {
			title = "Storage unavailable"
		}
	case status >= 500:
		s.log.ErrorContext(c.Request().Context(), "request failed", "request_id", requestID(c), "path", c.Request().URL.Path, "err", err)
		msg = ""
	}
	if msg == "" || msg == title {
		msg = defaultMessage(status)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if handlers.IsOpenAIRoute(c.Request().URL.Path) {
		// OpenAI's SDKs read {"error": {"message", "type", "code"}} on these
		// routes, also when the request was refused before the handler.
		_ = c.JSON(status, map[string]any{"error": map[string]string{"message": msg, "type": handlers.OpenAIErrorType(status), "code": code}})
		return
	}
	if wantsJSON(c) {
		_ = c.JSON(status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
		return
	}
	page := handlers.PageFor(c, title)
	if page.DevMode != s.cfg.DevMode() { // middleware did not run (e.g. 404)
		page.DevMode = s.cfg.DevMode()
		page.RequestID = requestID(c)
	}
	v := views.ErrorView{Status: status, Title: title, Message: msg}
	if status == http.StatusForbidden {
		if p := handlers.CurrentPrincipal(c); p != nil {
			v.SignedInAs, v.YourRoles = p.DisplayName(), roleWords(p.Roles)
		}
	}
	if rerr := handlers.Render(c, status, page, views.ErrorPage(v)); rerr != nil {
		s.log.ErrorContext(c.Request().Context(), "render error page", "request_id", requestID(c), "err", rerr)
		_ = c.String(status, title)
	}
}

func wantsJSON(c echo.Context) bool {
	p := c.Request().URL.Path
	return strings.HasPrefix(p, "/v1/") || p == "/readyz" ||
		strings.Contains(c.Request().Header.Get(echo.HeaderAccept), echo.MIMEApplicationJSON) && !strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/html")
}

func defaultMessage(status int) string {
	switch status {
	case http.StatusNotFound:
		return "There is nothing at this address."
	case http.StatusForbidden:
		return "You do not have access to this page."
	case http.StatusUnauthorized:
		return "Sign in first."
	case http.StatusMethodNotAllowed:
		return "This address does not accept that method."
	case http.StatusRequestEntityTooLarge:
		return "The request is too large."
	}
	if status >= 500 {
		return "Something went wrong on our side. The error has been logged; quote the request id when you report it."
	}
	return http.StatusText(status)
}

// roleNames are the roles as people say them.
var roleNames = map[string]string{
	identity.RoleApprover: "approver",
	identity.RoleOncall:   "on-call",
	identity.RoleAuditor:  "auditor",
	identity.RoleAdmin:    "admin",
}

// roleWords names roles in plain words, in the order given.
func roleWords(roles []string) []string {
	out := make([]string, 0, len(roles))
	for _, r := range roles {
		if w, ok := roleNames[r]; ok {
			out = append(out, w)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// needsRoles is the 403 sentence of a page open to roles: "This page
// needs the approver, on-call, auditor or admin role."
func needsRoles(roles []string) string {
	w := roleWords(roles)
	switch len(w) {
	case 0:
		return "You do not have access to this page."
	case 1:
		return "This page needs the " + w[0] + " role."
	}
	return "This page needs the " + strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1] + " role."
}
