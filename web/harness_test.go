package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/app"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// syncBuffer collects log output from concurrent goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// instance is a Warden server running on loopback for one test.
type instance struct {
	URL    string
	DB     *store.DB
	Server *Server
	Logs   *syncBuffer
	Agent  *app.Runtime
	// DemoKey is the demo virtual key (startWardenDemo only).
	DemoKey string
	// Faults makes the tool providers misbehave (tools.Injector).
	Faults *tools.Injector
	// Redactor redacts with the instance's key (tokens to look for).
	Redactor *redact.Redactor
	stop     context.CancelFunc
	done     chan error
}

// testEnv is env with a fresh data directory and, when the tests run on
// PostgreSQL (storetest), WARDEN_DATABASE_URL naming a fresh database of
// the test's own: the settings a real process reads.
func testEnv(t testing.TB, env map[string]string) map[string]string {
	t.Helper()
	vals := map[string]string{"WARDEN_DATA_DIR": t.TempDir()}
	if storetest.Postgres() {
		vals["WARDEN_DATABASE_URL"] = storetest.URL(t)
	}
	for k, v := range env {
		vals[k] = v
	}
	return vals
}

// openStore opens the store cfg names, as warden serve does: PostgreSQL
// when WARDEN_DATABASE_URL is set (with the WARDEN_DB_* settings),
// otherwise warden.db in the data directory. The caller closes it.
func openStore(t testing.TB, cfg config.Config) *store.DB {
	t.Helper()
	ctx := context.Background()
	var db *store.DB
	var err error
	if cfg.DatabaseURL == "" {
		path := filepath.Join(cfg.DataDir, "warden.db")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			storetest.SeedSQLite(t, path) // migrated once per test binary
		}
		db, err = store.Open(ctx, path)
	} else {
		db, err = store.OpenURL(ctx, cfg.DatabaseURL, store.Options{
			DataDir:          cfg.DataDir,
			MaxConns:         cfg.DBMaxConns,
			StatementTimeout: cfg.DBStatementTimeout,
			ConnectTimeout:   cfg.DBConnectTimeout,
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// startWarden runs a real server: real config validation, a real database
// (SQLite in the data directory, or PostgreSQL under storetest), real HTTP
// on a random loopback port. env adds settings.
func startWarden(t *testing.T, env map[string]string) *instance {
	t.Helper()
	return start(t, env, false)
}

// startWardenDemo runs a server with the agent runtime and the
// development-mode demo data (tenant acme, catalog, demo journeys); the
// demo key's secret is in DemoKey. The runtime's background work runs too,
// as in the real process: approved actions execute, pending ones expire.
func startWardenDemo(t testing.TB, env map[string]string) *instance {
	t.Helper()
	return start(t, env, true)
}

func start(t testing.TB, env map[string]string, demo bool) *instance {
	t.Helper()
	return startClock(t, env, demo, nil)
}

// startClock is start with the sessions' clock in the test's hands (nil:
// the real one).
func startClock(t testing.TB, env map[string]string, demo bool, clock func() time.Time) *instance {
	t.Helper()
	vals := testEnv(t, map[string]string{"WARDEN_ADDR": "127.0.0.1:0", "WARDEN_DRAIN_DELAY": "0s"})
	for k, v := range env {
		vals[k] = v
	}
	cfg, err := config.Load(nil, func(k string) (string, bool) { v, ok := vals[k]; return v, ok })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	db := openStore(t, cfg)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	key, err := redact.LoadOrCreateKey(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	faults := tools.NewInjector(1)
	rt, err := app.New(context.Background(), app.Options{DataDir: cfg.DataDir, DB: db, Log: logger, Redactor: redact.New(key), DevMode: cfg.DevMode(), Faults: faults, SkillDir: cfg.SkillDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	var demoKey string
	if demo {
		if demoKey, err = rt.SeedDemo(context.Background()); err != nil {
			t.Fatal(err)
		}
	} else if err := db.Transact(context.Background(), func(tx *store.Tx) error {
		_, err := tenants.Insert(context.Background(), tx, "acme", "Acme")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.WithListenAddr(ln.Addr().String())
	srv, err := New(Options{Config: cfg, DB: db, Logger: logger, Version: "test", Gateway: rt.Gateway, Runtime: rt.Journeys, Execution: rt.Execution, Models: rt.Models, MCP: rt.MCP, Redactor: redact.New(key), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	rt.SetRunbooks(srv.Runbooks())
	ctx, cancel := context.WithCancel(context.Background())
	inst := &instance{URL: cfg.PublicURL.String(), DB: db, Server: srv, Logs: logs, stop: cancel, done: make(chan error, 1), Agent: rt, DemoKey: demoKey, Faults: faults, Redactor: redact.New(key)}
	go func() { inst.done <- srv.Serve(ctx, ln) }()
	// Only demo instances run the background work: its trace retention
	// would purge the old journeys other tests insert.
	stopAgent := func() {}
	if demo {
		agentCtx, cancelAgent := context.WithCancel(context.Background())
		agentDone := make(chan struct{})
		go func() {
			defer close(agentDone)
			rt.Run(agentCtx)
		}()
		stopAgent = func() {
			cancelAgent()
			select {
			case <-agentDone:
			case <-time.After(20 * time.Second):
				t.Error("the runtime's background work did not stop")
			}
		}
	}
	// The server stops first, then the background work (it finishes the
	// jobs in progress), and only then does the database close.
	t.Cleanup(func() {
		inst.Stop(t)
		stopAgent()
		db.Close()
	})
	return inst
}

// Stop shuts the server down and waits for it.
func (in *instance) Stop(t testing.TB) {
	t.Helper()
	in.stop()
	select {
	case err := <-in.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		in.done <- nil
	case <-time.After(20 * time.Second):
		t.Error("server did not stop")
	}
}

// waitReady waits until the identity provider has been discovered.
func (in *instance) waitReady(t testing.TB) {
	t.Helper()
	if !wait.For(15*time.Second, in.Server.auth.ready) {
		t.Fatalf("identity provider never discovered; logs:\n%s", in.Logs.String())
	}
}

// waitUntil polls cond every 10 ms until it holds, failing after 10 s with
// what it waited for.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, 10*time.Second, what, cond)
}

// recordCallback makes b remember the last /auth/callback URL the
// provider sends it to (for a replay), read through the pointer.
func (b *browser) recordCallback() *string {
	var callback string
	b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/auth/callback" {
			callback = req.URL.String()
		}
		return nil
	}
	return &callback
}

// browser is an HTTP client with cookies that follows redirects, like a
// person's browser.
type browser struct {
	t    testing.TB
	c    *http.Client
	base string
}

func newBrowser(t testing.TB, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, Timeout: 20 * time.Second}, base: base}
}

// noRedirect returns a copy of b that stops at the first redirect.
func (b *browser) noRedirect() *browser {
	c := *b.c
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: b.t, c: &c, base: b.base}
}

type page struct {
	Status int
	URL    *url.URL
	Header http.Header
	Body   string
	Doc    *goquery.Document
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	checkNoSlicedToken(b.t, req.Method, req.URL.String(), resp.Header.Get("Content-Type"), string(body))
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(body))
	return page{Status: resp.StatusCode, URL: resp.Request.URL, Header: resp.Header, Body: string(body), Doc: doc}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.abs(path), nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values, header map[string]string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.abs(path), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return b.do(req)
}

func (b *browser) abs(path string) string {
	if strings.HasPrefix(path, "http") {
		return path
	}
	return b.base + path
}

// csrf reads the CSRF token from a console page's sign-out form.
func (b *browser) csrf() string {
	b.t.Helper()
	p := b.get("/")
	tok, ok := p.Doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		b.t.Fatalf("no CSRF token on the home page (status %d)", p.Status)
	}
	return tok
}

// loginDev signs in as a demo user through the development provider's
// picker, exactly as a person clicks through it.
func (b *browser) loginDev(username string) page {
	b.t.Helper()
	picker := b.get("/auth/login")
	if picker.Status != http.StatusOK || !strings.Contains(picker.URL.Path, "/dev-idp/") {
		b.t.Fatalf("GET /auth/login ended at %s with %d, want the dev-idp picker", picker.URL, picker.Status)
	}
	form := picker.Doc.Find("form").First()
	action, _ := form.Attr("action")
	id, _ := form.Find(`input[name="authRequestID"]`).Attr("value")
	if picker.Doc.Find(`[data-testid="devidp-user-`+username+`"]`).Length() != 1 {
		b.t.Fatalf("picker offers no user %q", username)
	}
	target, _ := picker.URL.Parse(action)
	return b.post(target.String(), url.Values{"authRequestID": {id}, "username": {username}}, nil)
}

func text(p page, testid string) string {
	return strings.TrimSpace(p.Doc.Find(`[data-testid="` + testid + `"]`).Text())
}

// lastAudit returns the newest audit event.
func lastAudit(t *testing.T, db *store.DB) audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: 1})
	if err != nil || len(evs) == 0 {
		t.Fatalf("no audit event: %v", err)
	}
	return evs[0]
}

func auditCount(t *testing.T, db *store.DB) int64 {
	t.Helper()
	n, err := audit.Count(context.Background(), db.Read())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
