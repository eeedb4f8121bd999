package mcpservers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/tools"
)

// sessionUpstream is a real MCP server (the Go SDK's, with sessions) on
// loopback that counts the sessions it opened (initialize requests: the
// SDK's client asks server/discover first, this server answers it with
// the older protocol's handshake), the executions of its tool, and its 404 answers; and
// can forget its sessions, as a restarted server does.
type sessionUpstream struct {
	*httptest.Server
	mu         sync.Mutex
	h          http.Handler
	server     *mcp.Server
	handshakes atomic.Int64
	executions atomic.Int64
	notFound   atomic.Int64
	auth       atomic.Value  // the Authorization of the last tool call
	hold       chan struct{} // when set, the tool waits for it
	loseAnswer atomic.Bool   // tools/call runs, then its connection is cut
}

// discard is a ResponseWriter whose answer goes nowhere.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

func newSessionUpstream(t *testing.T) *sessionUpstream {
	t.Helper()
	u := &sessionUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)}
	mcp.AddTool(u.server, &mcp.Tool{Name: "lookup_order", Description: "Look up an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, any, error) {
			u.executions.Add(1)
			u.mu.Lock()
			hold := u.hold
			u.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-ctx.Done():
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order " + in.OrderID + " shipped"}}}, nil, nil
		})
	u.forget()
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &msg)
			if msg.Method == "initialize" {
				u.handshakes.Add(1)
			}
			// The Authorization a call carried: a closing session's late
			// DELETE or stream GET, still with the old token, does not count.
			if msg.Method == "tools/call" {
				u.auth.Store(r.Header.Get("Authorization"))
			}
			if msg.Method == "tools/call" && u.loseAnswer.Load() {
				u.mu.Lock()
				h := u.h
				u.mu.Unlock()
				h.ServeHTTP(&discard{h: http.Header{}}, r)
				if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
					conn.Close()
				}
				return
			}
		}
		u.mu.Lock()
		h := u.h
		u.mu.Unlock()
		rec := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusNotFound {
			u.notFound.Add(1)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

// forget replaces the handler, and with it every session it knew.
func (u *sessionUpstream) forget() {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, nil)
	u.mu.Lock()
	u.h = h
	u.mu.Unlock()
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// poolRig registers u as server "up" (timeout 3 s) with token tok,
// loopback allowed.
func poolRig(t *testing.T, u *sessionUpstream, tok string) (context.Context, *mcpservers.Gateway, func(mcpservers.Server, string)) {
	t.Helper()
	ctx := context.Background()
	db, sealer, g := rig(t)
	if _, err := models.AllowHosts(ctx, db, admin, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	s := mcpservers.Server{Name: "up", URL: u.URL, Timeout: 3 * time.Second, Enabled: true}
	if _, err := mcpservers.Create(ctx, db, sealer, admin, s, tok); err != nil {
		t.Fatal(err)
	}
	update := func(s mcpservers.Server, tok string) {
		t.Helper()
		if _, err := mcpservers.Update(ctx, db, sealer, admin, s, tok); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, g, update
}

var lookup = tools.Tool{Name: "up__lookup_order"}

func execute(ctx context.Context, g *mcpservers.Gateway, order string) (string, error) {
	res, err := g.Execute(ctx, lookup, tools.Call{Tool: lookup.Name, Args: json.RawMessage(`{"order_id":"` + order + `"}`)})
	return string(res.Output), err
}

// Concurrent calls share the upstream session: far fewer handshakes than
// calls, every call executed once; a new token or URL opens a new
// session, which carries the new settings.
func TestPooledSessions(t *testing.T) {
	u := newSessionUpstream(t)
	ctx, g, update := poolRig(t, u, "tok-1")
	const calls = 60
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := execute(ctx, g, "ORD-"+string(rune('A'+i%26)))
			if err == nil && !strings.Contains(out, "shipped") {
				err = errors.New("answer " + out)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := u.executions.Load(); n != calls {
		t.Errorf("%d executions, want %d", n, calls)
	}
	if n := u.handshakes.Load(); n != 1 {
		t.Errorf("%d handshakes for %d concurrent calls, want 1 (one shared session)", n, calls)
	}
	for range 5 {
		if _, err := execute(ctx, g, "ORD-1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := u.handshakes.Load(); n != 1 {
		t.Errorf("%d handshakes after sequential calls, want 1", n)
	}

	// A new token: a new session, with it.
	update(mcpservers.Server{Name: "up", URL: u.URL, Timeout: 3 * time.Second}, "tok-2")
	if _, err := execute(ctx, g, "ORD-2"); err != nil {
		t.Fatal(err)
	}
	if n, a := u.handshakes.Load(), u.auth.Load(); n != 2 || a != "Bearer tok-2" {
		t.Errorf("after a new token: %d handshakes, last Authorization %q; want 2 and the new token", n, a)
	}

	// A new URL: the other upstream answers, on a session of its own.
	other := newSessionUpstream(t)
	update(mcpservers.Server{Name: "up", URL: other.URL, Timeout: 3 * time.Second}, "")
	if _, err := execute(ctx, g, "ORD-3"); err != nil {
		t.Fatal(err)
	}
	if other.handshakes.Load() != 1 || other.executions.Load() != 1 || u.executions.Load() != calls+6 {
		t.Errorf("after a new URL: the new upstream had %d handshakes and %d executions, the old one %d executions",
			other.handshakes.Load(), other.executions.Load(), u.executions.Load())
	}
}

// An upstream that forgot its sessions (restarted) answers the next call
// once: the call's request was answered 404 for its session, unhandled,
// so it is sent once more on a new session, and executed once.
func TestRestartedUpstream(t *testing.T) {
	u := newSessionUpstream(t)
	ctx, g, _ := poolRig(t, u, "")
	if _, err := execute(ctx, g, "ORD-1"); err != nil {
		t.Fatal(err)
	}
	u.forget()
	out, err := execute(ctx, g, "ORD-2")
	if err != nil || !strings.Contains(out, "ORD-2 shipped") {
		t.Fatalf("the call after a restart = %s, %v", out, err)
	}
	if u.notFound.Load() == 0 {
		t.Error("the upstream never answered 404: the test did not exercise a forgotten session")
	}
	if n := u.executions.Load(); n != 2 {
		t.Errorf("%d executions for 2 calls", n)
	}
	if n := u.handshakes.Load(); n != 2 {
		t.Errorf("%d handshakes, want 2 (a new session after the restart)", n)
	}
}

// A call in flight when its answer is lost is not sent again; a killed
// upstream is a failure, not a hang; a hung one is bounded by the
// server's timeout and the caller's cancellation.
func TestUpstreamFailures(t *testing.T) {
	u := newSessionUpstream(t)
	ctx, g, update := poolRig(t, u, "")
	if _, err := execute(ctx, g, "ORD-1"); err != nil {
		t.Fatal(err)
	}

	// Hung: the caller's cancellation ends the call.
	u.mu.Lock()
	u.hold = make(chan struct{})
	u.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	_, err := execute(cctx, g, "ORD-2")
	cancel()
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.Transient || !strings.Contains(te.Reason, "may or may not") || time.Since(start) > 2*time.Second {
		t.Errorf("a cancelled call = %v after %v", err, time.Since(start))
	}
	// Hung: the server's timeout ends the call.
	update(mcpservers.Server{Name: "up", URL: u.URL, Timeout: 400 * time.Millisecond}, "")
	start = time.Now()
	_, err = execute(ctx, g, "ORD-3")
	if !errors.As(err, &te) || !strings.Contains(te.Reason, "timeout") || time.Since(start) > 3*time.Second {
		t.Errorf("a call past the server's timeout = %v after %v", err, time.Since(start))
	}
	if n := u.executions.Load(); n != 3 {
		t.Errorf("%d executions, want 3 (no call sent twice)", n)
	}
	u.mu.Lock()
	close(u.hold)
	u.hold = nil
	u.mu.Unlock()
	if _, err := execute(ctx, g, "ORD-4"); err != nil {
		t.Fatal(err)
	}

	// The answer lost after the call ran: not sent again.
	u.loseAnswer.Store(true)
	_, err = execute(ctx, g, "ORD-5")
	u.loseAnswer.Store(false)
	t.Logf("answer lost: %v", err)
	if !errors.As(err, &te) || te.Kind != tools.Transient || !strings.Contains(te.Reason, "may or may not") {
		t.Errorf("a call whose answer was lost = %v", err)
	}
	if n := u.executions.Load(); n != 5 {
		t.Errorf("%d executions, want 5 (the call whose answer was lost was not sent again)", n)
	}
	if _, err := execute(ctx, g, "ORD-6"); err != nil {
		t.Fatalf("the next call, on a new session: %v", err)
	}

	// Killed.
	u.CloseClientConnections()
	u.Close()
	start = time.Now()
	_, err = execute(ctx, g, "ORD-7")
	t.Logf("killed: %v", err)
	if !errors.As(err, &te) || te.Kind != tools.Transient || time.Since(start) > 3*time.Second {
		t.Errorf("a call to a killed upstream = %v after %v", err, time.Since(start))
	}
	if n := u.executions.Load(); n != 6 {
		t.Errorf("%d executions, want 6", n)
	}
}
