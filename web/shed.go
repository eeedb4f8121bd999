package web

import (
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/problem"
)

// shedAPI admits at most WARDEN_API_MAX_INFLIGHT agent API writes at once
// and answers the rest at once with 503 overloaded and Retry-After: 1,
// counted in /metrics (warden_api_shed_total). Under overload the
// requests admitted keep their latency instead of everyone's collapsing;
// the console does not pass here and stays usable.
//
// It returns two middlewares over the same slots: writes holds a slot
// until the request is answered; chat (POST /v1/chat/completions) holds
// one until the answer starts — Warden's own work on a call (reading and
// checking it, redacting, reserving) and the wait for the upstream's first
// byte — so that a stream, once it flows, is bounded by its deployment's
// concurrency instead of starving journeys. A handler may also give its
// slot back earlier (handlers.ReleaseSlotKey): an MCP call that waits for
// its approvers holds none while it waits.
func (s *Server) shedAPI() (writes, chat echo.MiddlewareFunc) {
	slots := make(chan struct{}, s.cfg.APIMaxInFlight)
	overloaded := problem.Unavailable("overloaded", "Warden is at its limit of requests in flight; try again in a second.", time.Second)
	shed := func(c echo.Context) error {
		s.shed.Add(1)
		// Answered here, not logged: under overload a line per refusal
		// would be the load.
		return handlers.WriteProblem(c, overloaded, handlers.PageFor(c, ""))
	}
	writes = func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				return next(c)
			default:
				return shed(c)
			}
		}
	}
	chat = func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			select {
			case slots <- struct{}{}:
				var once sync.Once
				release := func() { once.Do(func() { <-slots }) }
				c.Response().Before(release) // the answer starts: its status is written
				c.Set(handlers.ReleaseSlotKey, release)
				defer release()
				return next(c)
			default:
				return shed(c)
			}
		}
	}
	return writes, chat
}
