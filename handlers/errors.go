package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// This file is the one place an error becomes a response, for every door:
// a console page, the API's JSON ({"error": {"code", "message"}}, with the
// journey when one was recorded before it failed) and the OpenAI-shaped
// JSON of the model door ({"error": {"message", "type", "code"}}). A
// handler returns its error; web's error handler logs it and calls
// WriteProblem. Retry-After is written here and nowhere else.

// ProblemOf reads any error as a problem and the status to answer with: a
// *problem.Error as it is; the router's and middleware's own
// *echo.HTTPError (an unknown path, a missing CSRF token, a wrong method)
// with its own status; anything else is Warden's own failure (500), whose
// cause is never shown. A problem without a message gets the status's
// sentence.
func ProblemOf(err error) (int, *problem.Error) {
	var p *problem.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &p):
	case errors.As(err, &he):
		// The router's words for its own failure are internal, and its
		// status text says nothing a sentence would not.
		msg, _ := he.Message.(string)
		if msg == "" || msg == http.StatusText(he.Code) || he.Code >= 500 {
			msg = defaultMessage(he.Code)
		}
		return he.Code, problem.New(problem.KindOf(he.Code), problem.DefaultCode(he.Code), msg)
	default:
		p = problem.Internal(err)
	}
	if p.Message == "" {
		c := *p
		c.Message = defaultMessage(p.Status())
		p = &c
	}
	return p.Status(), p
}

// Route shapes of an error answer.
type errorShape int

const (
	shapePage errorShape = iota
	shapeAPI
	shapeOpenAI
)

// shapeOf is the shape a request's errors take: OpenAI's on its routes
// (also when refused before the handler ran), the API's on /v1 and for
// clients that ask for JSON, a page otherwise.
func shapeOf(c echo.Context) errorShape {
	p := c.Request().URL.Path
	accept := c.Request().Header.Get(echo.HeaderAccept)
	switch {
	case IsOpenAIRoute(p):
		return shapeOpenAI
	case strings.HasPrefix(p, "/v1/") || p == "/readyz" ||
		strings.Contains(accept, echo.MIMEApplicationJSON) && !strings.Contains(accept, "text/html"):
		return shapeAPI
	}
	return shapePage
}

// ProblemJSON is err's JSON answer in the request's shape (the OpenAI
// routes' or the API's), with its status; it writes Retry-After where the
// problem says when to try again. The journeys API keeps the body for
// Idempotency-Key replays, so it is a value, not a write.
func ProblemJSON(c echo.Context, err error) (int, any) {
	status, p := ProblemOf(err)
	p.SetRetryAfter(c.Response().Header())
	if shapeOf(c) == shapeOpenAI {
		msg, code := p.Message, p.Code
		var he *echo.HTTPError
		if errors.As(err, &he) && (he.Code == http.StatusNotFound || he.Code == http.StatusMethodNotAllowed) {
			// The router's own refusal: the client asked for a route Warden
			// does not serve (an OpenAI endpoint it lacks, a typo, a GET
			// of a POST route), and the answer says which ones it does.
			msg, code = unservedMessage(c, he.Code), "unknown_url"
			if he.Code == http.StatusMethodNotAllowed {
				code = "method_not_allowed"
			}
		}
		return status, map[string]any{"error": map[string]any{"message": msg, "type": openAIType(p.Kind), "code": code}}
	}
	ae := apiError{Code: p.Code, Message: p.Message}
	if strings.HasPrefix(c.Request().URL.Path, "/v1/") {
		ae.Type = openAIType(p.Kind) // every /v1 error carries OpenAI's type
	}
	body := map[string]any{"error": ae}
	var je *journeys.JourneyError
	if errors.As(err, &je) {
		j := toJourneyJSON(je.Journey, nil, false)
		j.Error = &apiError{Code: p.Code, Message: p.Message}
		body["id"], body["status"], body["journey"] = j.ID, j.Status, j
	}
	return status, body
}

// unservedMessage is the sentence of a 404 or 405 of the router on an
// OpenAI route: what was asked, and the routes Warden serves.
func unservedMessage(c echo.Context, status int) string {
	r := c.Request()
	path := r.URL.Path
	if len(path) > 100 {
		path = path[:100] + "…"
	}
	what := "is not a route of Warden"
	if status == http.StatusMethodNotAllowed {
		what = "is not served: the route does not take " + r.Method
	}
	return r.Method + " " + path + " " + what + ". " + ServedRoutes
}

// openAIType is the OpenAI error "type" of a problem kind, the one
// mapping the model door uses for every error it answers. Every kind is
// named (TestOpenAITypeNamesEveryKind): OpenAI's clients read the type to
// decide what to raise.
func openAIType(k problem.Kind) string {
	switch k {
	case problem.KindUnauthenticated:
		return "authentication_error"
	case problem.KindForbidden:
		return "permission_error"
	case problem.KindExhausted:
		return "insufficient_quota"
	case problem.KindRateLimited:
		return "rate_limit_error"
	case problem.KindUnavailable, problem.KindInternal, problem.KindBadGateway:
		return "server_error"
	case problem.KindInvalid, problem.KindNotFound, problem.KindConflict, problem.KindTooLarge,
		problem.KindUnprocessable, problem.KindMisdirected:
		return "invalid_request_error"
	}
	return "server_error" // a kind added without its type here is Warden's to name
}

// WriteProblem answers err in the request's shape: JSON for the API and
// the OpenAI routes (ProblemJSON), otherwise the console's error page,
// which names the signed-in user and their roles on a 403. page is the
// page the request would have had (PageFor), devMode whether Warden runs
// with the development identity provider, for a request the page
// middleware never saw (an unknown path). A HEAD request gets the status
// alone.
func WriteProblem(c echo.Context, err error, page views.Page) error {
	shape := shapeOf(c)
	if shape != shapePage {
		status, body := ProblemJSON(c, err)
		if c.Request().Method == http.MethodHead {
			return c.NoContent(status)
		}
		return c.JSON(status, body)
	}
	status, p := ProblemOf(err)
	p.SetRetryAfter(c.Response().Header())
	if c.Request().Method == http.MethodHead {
		return c.NoContent(status)
	}
	title := p.Title
	if title == "" {
		title = http.StatusText(status)
	}
	page.Title = title
	msg := p.Message
	if msg == title {
		msg = defaultMessage(status)
	}
	v := views.ErrorView{Status: status, Title: title, Message: msg}
	if status == http.StatusForbidden {
		if u := CurrentPrincipal(c); u != nil {
			v.SignedInAs, v.YourRoles = u.DisplayName(), RoleWords(u.Roles)
		}
	}
	if rerr := Render(c, status, page, views.ErrorPage(v)); rerr != nil {
		_ = c.String(status, title)
		return rerr
	}
	return nil
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
		return problem.Internal(nil).Message
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

// RoleWords names roles in plain words, in the order given.
func RoleWords(roles []string) []string {
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
