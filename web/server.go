// Package web is Warden's Echo application: the server, its route table,
// middleware, sessions, OIDC login, the development identity provider and
// the health endpoints.
package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gsessions "github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/sessions"
	"github.com/wardenhq/warden/signin"
	"github.com/wardenhq/warden/web/devidp"
)

const devIdPPath = devidp.Path

// Redactor removes PII and secrets from values before they are written to
// the audit trail.
type Redactor interface {
	Value(v any) any
}

// Server is one running console.
type Server struct {
	cfg      config.Config
	db       *store.DB
	log      *slog.Logger
	redactor Redactor
	echo     *echo.Echo
	auth     *authenticator

	// Sign-in and sessions (sessions.go, auth.go).
	flows            *gsessions.CookieStore // the flow cookie: sign-ins in progress, one-time messages
	sessionCookie    string
	flowCookie       string
	csrfKey          []byte
	policy           sessions.Policy
	now              func() time.Time // the sessions' clock; tests move it
	failures         *failureLimiter
	refusedCallbacks atomic.Int64 // callbacks refused before any audit: no or unknown state

	devIdP    http.Handler
	hosts     hostSet // the Host values a development server answers to (host.go)
	started   time.Time
	gateway   *admission.Gateway
	runtime   *journeys.Service
	execution *execution.Service
	models    *models.Gateway
	mcp       *mcpservers.Gateway // the /mcp door and the MCP servers page (mcpGateway)
	notify    *notify.Service     // the Notifications page (notifier)
	runbooks  *runbooks.Set
	version   string
	// stopTraces flushes and stops the trace exporter (tracing.go); nil
	// without WARDEN_OTLP_ENDPOINT.
	stopTraces func(context.Context) error

	ready      readiness // /readyz's database check
	drainDelay time.Duration
	draining   atomic.Bool
	bg         sync.WaitGroup
	inflight   atomic.Int64 // requests being handled (waitInflight)
	shed       atomic.Int64 // agent API requests shed (/metrics)

	modelMetrics *modelMetrics // the model gateway's observer (/metrics)
}

// Options are the parts of a server that its caller builds.
type Options struct {
	Config   config.Config
	DB       *store.DB
	Logger   *slog.Logger
	Redactor Redactor
	// Version is shown on the status page.
	Version string
	// Gateway, Runtime (journeys) and Execution (actions) serve the
	// agents' JSON API (/v1) and the approval pages. Without them the API
	// answers 503.
	Gateway   *admission.Gateway
	Runtime   *journeys.Service
	Execution *execution.Service
	// Models is the chat gateway, shared with the runtime's model-driven
	// skills so each deployment's concurrency limit, the key limits and the
	// answer cache are counted once. Nil builds one for the HTTP route.
	Models *models.Gateway
	// MCP is the runtime's gateway to upstream MCP servers (the /mcp door,
	// the MCP servers page). Nil builds one without the runtime's guard.
	MCP *mcpservers.Gateway
	// Notify is the runtime's notification service (the Notifications
	// page). Nil builds one.
	Notify *notify.Service
	// HTTPClient is used to reach the identity provider (tests inject one).
	HTTPClient *http.Client
	// Clock is the sessions' clock: idle timeouts, lifetimes, sign-ins in
	// progress (tests move it). Nil is time.Now.
	Clock func() time.Time
	// ReadyTimeout bounds /readyz's database check; zero is
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// New builds the server. In development mode it also builds the built-in
// identity provider.
func New(o Options) (*Server, error) {
	cfg := o.Config
	hash, block, err := loadOrCreateSessionKeys(cfg.DataDir, cfg.SessionHashKey, cfg.SessionBlockKey)
	if err != nil {
		return nil, err
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	s := &Server{
		cfg:           cfg,
		db:            o.DB,
		log:           o.Logger,
		redactor:      o.Redactor,
		flows:         newFlowStore(hash, block, cfg.Secure()),
		sessionCookie: cookieName(sessionCookieName, cfg.Secure()),
		flowCookie:    cookieName(flowCookieName, cfg.Secure()),
		csrfKey:       hash,
		policy:        sessions.Policy{Idle: cfg.SessionIdle, Max: cfg.SessionMax},
		now:           time.Now,
		failures:      newFailureLimiter(),
		started:       time.Now(),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if o.Clock != nil {
		s.now = o.Clock
	}
	s.drainDelay = cfg.DrainDelay
	s.ready = readiness{timeout: o.ReadyTimeout, check: s.db.Ready}
	if s.ready.timeout <= 0 {
		s.ready.timeout = DefaultReadyTimeout
	}
	s.version = o.Version
	s.gateway, s.runtime, s.execution, s.models, s.mcp, s.notify = o.Gateway, o.Runtime, o.Execution, o.Models, o.MCP, o.Notify
	if s.mcp != nil {
		s.mcp.SetConsoleURL(strings.TrimRight(cfg.PublicURL.String(), "/"))
	}
	s.runbooks = loadRunbooks(cfg.RunbookDir, s.log)
	if s.runtime != nil && s.execution != nil {
		// An approved runbook request (purge_traces) runs in its decision.
		s.execution.SetOperational(runbooks.Decided(runbooks.Deps{DB: s.db, Runbooks: s.runbooks,
			Runtime: runbooks.Services{Journeys: s.runtime, Execution: s.execution}, Sealer: s.runtime.Sealer()}))
	}

	a := &authenticator{
		issuer:       cfg.OIDCIssuer,
		clientID:     cfg.OIDCClientID,
		clientSecret: cfg.OIDCClientSecret,
		redirectURL:  cfg.OIDCRedirectURL,
		groupsClaim:  cfg.OIDCGroupsClaim,
		scopes:       cfg.OIDCScopes,
		tokenAuth:    cfg.OIDCTokenAuth,
		grants:       identity.Grants{RoleMapping: cfg.RoleMapping, TenantPrefix: cfg.TenantPrefix},
		client:       client,
		log:          s.log,
	}
	if cfg.DevMode() {
		a.issuer = devidp.IssuerFor(cfg.PublicURL)
		if prev, err := devidp.RecordIssuer(cfg.DataDir, a.issuer); err != nil {
			return nil, err
		} else if prev != "" {
			s.log.Warn("the development identity provider's issuer changed with the public URL: people who signed in through the earlier one are other principals now; set WARDEN_PUBLIC_URL to keep one issuer per data directory",
				"issuer", a.issuer, "earlier_issuer", prev, "data_dir", cfg.DataDir)
		}
		a.clientID = "warden-console"
		a.clientSecret = randomToken()
		var key [32]byte
		copy(key[:], randomToken())
		p, err := devidp.New(devidp.Config{
			Issuer:       a.issuer,
			ClientID:     a.clientID,
			ClientSecret: a.clientSecret,
			RedirectURIs: []string{cfg.OIDCRedirectURL},
			// RP-initiated logout comes back to the sign-in page.
			PostLogoutRedirectURIs: []string{s.postLogoutURL()},
			Users:                  devidp.DemoUsers(),
			CryptoKey:              key,
			Logger:                 s.log,
		})
		if err != nil {
			return nil, fmt.Errorf("development identity provider: %w", err)
		}
		s.devIdP = p.Handler()
	}
	s.auth = a

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Use(
		s.countInflight(),
		middleware.Recover(),
		s.secureHeaders(),
		s.requestID(),
		s.traceContext(),
		s.clientClosed(),
		s.requestLog(),
		s.hostCheck(),
		middleware.BodyLimit("1M"),
	)
	s.echo = e
	s.routes()
	// Last, so that a server that cannot be built leaves no exporter.
	if err := s.startTracing(); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler is the server's HTTP handler (for tests).
func (s *Server) Handler() http.Handler { return s.echo }

// Runbooks are the runbooks the server loaded: the embedded ones and those
// of WARDEN_RUNBOOK_DIR.
func (s *Server) Runbooks() *runbooks.Set { return s.runbooks }

// releaseWait bounds how long shutdown waits, once the grace ran out and
// the remaining requests were cancelled, for their handlers to return.
const releaseWait = 5 * time.Second

// writeTimeout bounds how long one response may take, counted from the end
// of reading the request. The longest request is an agent's long poll, so
// handlers.MaxWait must stay clearly below it.
const writeTimeout = 60 * time.Second

// Serve answers on ln until ctx ends, then shuts down: readiness turns 503,
// after the drain delay the listener closes, and in-flight requests get up
// to the configured grace period to finish. The caller closes the database
// after Serve returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// Last: the spans of the requests that ended are sent.
	defer s.stopTracing()
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Connections that never sent a byte (a client's spare dial, a load
	// balancer's pre-opened pool) are closed when shutdown begins:
	// http.Server.Shutdown counts them as busy for their first 5 s.
	fresh := newFreshConns()
	srv.ConnState = fresh.track
	// Requests run under reqCtx: when the shutdown grace runs out it is
	// cancelled, so the handlers still running (a journey waiting on a
	// hanging provider, a long poll) stop and release what they hold —
	// budget reservations, running journeys — before the caller closes
	// the database.
	reqCtx, cancelRequests := context.WithCancelCause(context.Background())
	defer cancelRequests(nil)
	srv.BaseContext = func(net.Listener) context.Context { return reqCtx }
	s.hosts.allowListener(ln.Addr())
	bgCtx, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.auth.discover(bgCtx)
	}()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.summarizeLoginFailures(bgCtx)
	}()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.purgeSessions(bgCtx)
	}()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		stopBG()
		s.bg.Wait()
		return err
	case <-ctx.Done():
	}

	s.draining.Store(true)
	s.log.Info("shutting down: readiness is now 503", "drain_delay", s.drainDelay, "grace", s.cfg.ShutdownGrace)
	time.Sleep(s.drainDelay)
	stopBG()
	shutCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	shutdownErr := make(chan error, 1)
	go func() { shutdownErr <- srv.Shutdown(shutCtx) }()
	fresh.closeAll()
	err := <-shutdownErr
	if err != nil {
		// The grace ran out: cancel what is still running and give the
		// handlers a moment to record their ends.
		s.log.Warn("shutdown grace ran out: cancelling the requests still running")
		cancelRequests(journeys.ErrShuttingDown)
		s.waitInflight(releaseWait)
		srv.Close()
	}
	s.bg.Wait()
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	if err != nil {
		return fmt.Errorf("shutdown: in-flight requests did not finish within %s: %w", s.cfg.ShutdownGrace, err)
	}
	s.log.Info("shutdown complete")
	return nil
}

// sessionKeep is how long ended sessions stay listed before their rows
// are deleted.
const sessionKeep = 7 * 24 * time.Hour

// purgeSessions deletes, hourly, the rows of sessions that ended more than
// sessionKeep ago, so the table does not grow by a row per sign-in for
// ever.
func (s *Server) purgeSessions(ctx context.Context) {
	for {
		if n, err := sessions.Purge(ctx, s.db, s.now().Add(-sessionKeep), s.policy); err != nil && ctx.Err() == nil {
			s.log.Warn("purging ended sessions failed", "err", err)
		} else if n > 0 {
			s.log.Info("ended sessions purged", "sessions", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}

// countInflight counts the requests being handled, for waitInflight.
func (s *Server) countInflight() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			s.inflight.Add(1)
			defer s.inflight.Add(-1)
			return next(c)
		}
	}
}

// waitInflight waits until no request is being handled, at most d.
func (s *Server) waitInflight(d time.Duration) {
	deadline := time.Now().Add(d)
	for s.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// healthz is liveness: the process answers. It checks no dependency.
func (s *Server) healthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok\n")
}

// readyz is readiness: the database answers, every migration is applied
// and the server is not draining. The database check has its own bound
// (readiness, DefaultReadyTimeout), and a 503 names the check that failed.
func (s *Server) readyz(c echo.Context) error {
	if s.draining.Load() {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "draining"})
	}
	ctx := c.Request().Context()
	if failed, detail, err := s.ready.database(ctx); err != nil {
		s.log.WarnContext(ctx, "not ready", "failed", failed, "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{
			"status": "unavailable", "reason": "database", "failed": failed, "detail": detail})
	}
	// The identity provider does not decide readiness (signed-in people
	// keep working without it), but its state is reported: an issuer
	// mismatch is a configuration mistake, not an outage.
	st := s.auth.status()
	details := map[string]any{
		"identity_provider": st.State,
		"refused_callbacks": s.refusedCallbacks.Load(),
		"database":          s.db.Dialect().String(),
	}
	if st.State == providerIssuerMismatch {
		details["identity_provider_issuer_configured"] = s.auth.issuer
		details["identity_provider_issuer_announced"] = st.Discovered
	}
	return c.JSON(http.StatusOK, map[string]any{"status": "ready", "details": details})
}

// summarizeLoginFailures writes, once a minute, the summary events of
// refused sign-ins held back per client address (failureLimiter).
func (s *Server) summarizeLoginFailures(ctx context.Context) {
	t := time.NewTicker(summaryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, n := range s.failures.flush(s.now()) {
				if err := signin.RefusedSuppressed(ctx, s.db, n); err != nil {
					s.log.Warn("summary of refused sign-ins not recorded", "count", n, "err", err)
				}
			}
		}
	}
}

func (s *Server) redactDetails(d map[string]any) map[string]any {
	if s.redactor == nil {
		return d
	}
	if m, ok := s.redactor.Value(d).(map[string]any); ok {
		return m
	}
	return d
}

// loadRunbooks reads the built-in runbooks and those in dir. A file that
// cannot be used is logged, named with the reason, and left out: one bad
// runbook must not keep the others (or Warden) from starting.
func loadRunbooks(dir string, log *slog.Logger) *runbooks.Set {
	var fsys fs.FS
	if dir != "" {
		fsys = os.DirFS(dir)
	}
	set, problems := runbooks.Load(fsys)
	for _, err := range problems {
		log.Warn("runbook skipped", "dir", dir, "error", err.Error())
	}
	log.Info("runbooks loaded", "count", len(set.All()), "dir", dir)
	return set
}

// freshConns holds the connections that have not read a byte of a
// request yet (http.StateNew).
type freshConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	shut  bool
}

func newFreshConns() *freshConns { return &freshConns{conns: map[net.Conn]struct{}{}} }

func (f *freshConns) track(c net.Conn, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st != http.StateNew {
		delete(f.conns, c)
		return
	}
	if f.shut {
		// Accepted as shutdown began: nothing was read from it.
		c.Close()
		return
	}
	f.conns[c] = struct{}{}
}

// closeAll closes every connection still waiting for its first request,
// and any accepted from now on before it sends one.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shut = true
	for c := range f.conns {
		c.Close()
		delete(f.conns, c)
	}
}
