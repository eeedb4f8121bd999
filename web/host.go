package web

import (
	"net"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/wardenhq/warden/platform/problem"
)

// hostCheck refuses, in development mode only, a request whose Host is not
// one this server answers at. The development provider signs anyone in as
// any demo user and the console trusts loopback, so a page on another site
// that rebinds its own name to 127.0.0.1 (DNS rebinding) could otherwise
// drive /login, /dev-idp and /v1 from the visitor's browser with its own
// origin. A rebound name still carries the page's host in Host, which is
// what is checked. In production the load balancer and the real identity
// provider decide which names reach Warden, so nothing is checked there.
//
// The hosts allowed are the public URL's host and the address listened on
// (Serve adds it), with localhost, 127.0.0.1 and [::1] as aliases of a
// loopback listen address on the same port. A refusal is 421 Misdirected
// Request with a sentence naming where the server does answer. The probes
// (/healthz, /readyz) answer whatever the Host: a load balancer or an
// orchestrator asks by address, and they tell nothing a rebinding page
// could use.
func (s *Server) hostCheck() echo.MiddlewareFunc {
	if !s.cfg.DevMode() {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	public := s.cfg.PublicURL.String()
	s.hosts.allow(s.cfg.PublicURL.Host, s.cfg.PublicURL.Scheme)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if s.hosts.allowed(r.Host) || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
				return next(c)
			}
			s.log.WarnContext(r.Context(), "request refused: unknown Host in development mode", "request_id", requestID(c), "host", r.Host, "path", r.URL.Path)
			return problem.New(problem.KindMisdirected, "misdirected_request",
				"This development server answers only at "+public+"; open it there.")
		}
	}
}

// hostSet is the Host header values a development server answers to.
type hostSet struct {
	mu    sync.RWMutex
	hosts map[string]bool
}

// allow adds host (host or host:port, as in a URL); a host without a port
// also matches with the scheme's default port.
func (h *hostSet) allow(host, scheme string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hosts == nil {
		h.hosts = map[string]bool{}
	}
	host = strings.ToLower(host)
	h.hosts[host] = true
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		h.hosts[net.JoinHostPort(strings.Trim(host, "[]"), port)] = true
	}
}

// allowListener adds the address listened on, and for a loopback address
// the loopback names on the same port.
func (h *hostSet) allowListener(addr net.Addr) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return
	}
	h.allow(net.JoinHostPort(host, port), "http")
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		for _, alias := range []string{"localhost", "127.0.0.1", "::1"} {
			h.allow(net.JoinHostPort(alias, port), "http")
		}
	}
}

func (h *hostSet) allowed(host string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.hosts[strings.ToLower(host)]
}
