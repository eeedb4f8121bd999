package web

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/problem"
)

// handleError is where a request's error is logged and answered: handlers
// and middleware return errors, and handlers.WriteProblem renders them in
// the request's shape (a page, the API's JSON, OpenAI's JSON). Only 5xx
// are logged as errors, with the request id; the user sees the id but
// never the internal cause.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, p := handlers.ProblemOf(err)
	ctx := c.Request().Context()
	switch {
	case status >= 500 && clientGone(c):
		// The client hung up and the handler stopped with it: nobody reads
		// the answer (clientClosed logs it as 499), and it is no failure.
		s.log.InfoContext(ctx, "request stopped: the client went away", "request_id", requestID(c), "path", c.Request().URL.Path)
	case p.Kind == problem.KindUnavailable:
		// A dependency (the storage, a provider) is down: the message says
		// so in words made for users, and when to try again.
		s.log.WarnContext(ctx, "request refused: dependency unavailable", "request_id", requestID(c), "path", c.Request().URL.Path, "code", p.Code, "err", err)
	case status >= 500:
		s.log.ErrorContext(ctx, "request failed", "request_id", requestID(c), "path", c.Request().URL.Path, "err", err)
	}
	page := handlers.PageFor(c, "")
	if page.DevMode != s.cfg.DevMode() { // middleware did not run (e.g. 404)
		page.DevMode = s.cfg.DevMode()
		page.RequestID = requestID(c)
	}
	if werr := handlers.WriteProblem(c, err, page); werr != nil {
		s.log.ErrorContext(ctx, "render error page", "request_id", requestID(c), "err", werr)
	}
}

// needsRoles is the 403 sentence of a page open to roles: "This page
// needs the approver, on-call, auditor or admin role."
func needsRoles(roles []string) string {
	w := handlers.RoleWords(roles)
	switch len(w) {
	case 0:
		return "You do not have access to this page."
	case 1:
		return "This page needs the " + w[0] + " role."
	}
	return "This page needs the " + strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1] + " role."
}
