// Package problem is Warden's one error vocabulary. A domain package that
// refuses something returns a *problem.Error: a Kind (what sort of
// refusal, which decides the HTTP status), a stable Code for machines
// ("invalid_arguments", "tenant_frozen") and a Message for people. The web
// layer turns any error into a response in one place for pages and one
// for JSON, with From:
//
//	return problem.Invalid("invalid_arguments", `"amount_minor" must be a whole number.`)
//
//	p := problem.From(err) // a *problem.Error, or Internal for anything else
//	c.JSON(p.Status(), ...)
//
// Messages are shown as written, so they must hold nothing internal; the
// cause (Err) is for logs only and is never shown.
package problem

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Kind is what sort of refusal an error is.
type Kind int

const (
	KindInternal        Kind = iota // Warden's fault: 500, logged
	KindInvalid                     // the input is malformed: 400
	KindUnauthenticated             // no or a bad credential: 401
	KindExhausted                   // a budget cannot cover it: 402
	KindForbidden                   // not allowed for this caller: 403
	KindNotFound                    // no such thing (for this caller): 404
	KindConflict                    // the state changed or forbids it now: 409
	KindTooLarge                    // the request is too large: 413
	KindUnprocessable               // well-formed, but cannot be done as asked: 422
	KindRateLimited                 // too many requests: 429
	KindUnavailable                 // a dependency is down or busy: 503
	KindBadGateway                  // an upstream answered outside its protocol: 502
	KindMisdirected                 // this server does not answer at that host: 421
)

var statuses = map[Kind]int{
	KindInternal: http.StatusInternalServerError, KindInvalid: http.StatusBadRequest,
	KindUnauthenticated: http.StatusUnauthorized, KindExhausted: http.StatusPaymentRequired,
	KindForbidden: http.StatusForbidden, KindNotFound: http.StatusNotFound, KindConflict: http.StatusConflict,
	KindTooLarge: http.StatusRequestEntityTooLarge, KindUnprocessable: http.StatusUnprocessableEntity,
	KindRateLimited: http.StatusTooManyRequests, KindUnavailable: http.StatusServiceUnavailable,
	KindBadGateway: http.StatusBadGateway, KindMisdirected: http.StatusMisdirectedRequest,
}

// Status is the HTTP status of a kind.
func (k Kind) Status() int { return statuses[k] }

// Error is a refusal or failure, said once for every door.
type Error struct {
	Kind       Kind
	Code       string        // stable, for machines
	Title      string        // optional short summary for a page heading
	Message    string        // for people: shown as written, a whole sentence
	RetryAfter time.Duration // for rate limits and unavailability
	Err        error         // the cause, for logs; never shown
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Status is the HTTP status the error maps to.
func (e *Error) Status() int { return e.Kind.Status() }

// Wrap returns a copy of e caused by err (for logs), so that a shared
// refusal value can carry the cause of one occurrence.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

// Is lets errors.Is match a copy made by Wrap against the value it was
// copied from: same kind and code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Code == e.Code
}

// New returns a refusal of kind with code and message.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// Titled returns a copy of e with a short summary for a page heading.
func (e *Error) Titled(title string) *Error {
	c := *e
	c.Title = title
	return &c
}

// Constructors for the common kinds.
func Invalid(code, message string) *Error       { return New(KindInvalid, code, message) }
func Forbidden(code, message string) *Error     { return New(KindForbidden, code, message) }
func NotFound(code, message string) *Error      { return New(KindNotFound, code, message) }
func Conflict(code, message string) *Error      { return New(KindConflict, code, message) }
func Unprocessable(code, message string) *Error { return New(KindUnprocessable, code, message) }

// Unavailable is a dependency that is down or busy; retry after.
func Unavailable(code, message string, retryAfter time.Duration) *Error {
	return &Error{Kind: KindUnavailable, Code: code, Message: message, RetryAfter: retryAfter}
}

// Internal is Warden's own failure; err is logged, never shown.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Code: "internal", Message: internalMessage, Err: err}
}

const internalMessage = "Something went wrong on Warden's side. The error has been logged; quote the request id when you report it."

// From returns the *Error in err's chain, or an Internal one wrapping err.
// A nil err gives nil.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var p *Error
	if errors.As(err, &p) {
		return p
	}
	return Internal(err)
}

// DefaultCode is the code of a refusal that has none of its own, by HTTP
// status: what the web layer uses for the router's and middleware's own
// errors (an unknown path, a missing CSRF token, a body too large).
func DefaultCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusServiceUnavailable:
		return "unavailable"
	}
	if status >= 500 {
		return "internal"
	}
	return "error"
}

// KindOf is the kind of an HTTP status, for errors that arrive as a status
// (from the router or middleware).
func KindOf(status int) Kind {
	for k, s := range statuses {
		if s == status {
			return k
		}
	}
	if status >= 500 {
		return KindInternal
	}
	return KindInvalid
}

// SetRetryAfter writes the Retry-After header for e when it says when to
// try again: whole seconds, at least 1. It writes nothing otherwise. Every
// response that carries a problem (page, API JSON, OpenAI-shaped JSON)
// writes the header through here.
func (e *Error) SetRetryAfter(h http.Header) {
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(max(1, e.RetryAfter.Round(time.Second).Seconds()))))
	}
}
