package mcpservers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Forwarded calls share one MCP client session per upstream server
// instead of opening one per call (initialize, then the call, then the
// session's end: several round trips). The SDK's ClientSession takes
// concurrent calls: each is its own POST, answered on its own, and the
// SDK's server runs calls concurrently. A session is keyed by everything
// it was opened with: the server's name and URL, a hash of its token and
// extra headers, and the egress client of the allowed hosts (a changed
// setting never reuses an old session: the next call opens a new one and
// the old one is closed once its last call ended). A session is dropped
// when its connection broke or a call on it failed other than with a
// JSON-RPC error answer, and closed after sessionIdle without calls.
//
// At most once: a call is sent again, on a new session, only when its
// own HTTP request provably did nothing upstream (sendProbe.notSent):
// the request never left Warden, or the upstream answered it 404 for
// the session it named (Streamable HTTP: a server that forgot a session
// MUST answer 404 to requests naming it, without handling them).

// sessionIdle is how long a session without calls is kept.
const sessionIdle = 2 * time.Minute

// sessionKey is what an upstream session was opened with.
type sessionKey struct {
	server, url, cred string
	client            *http.Client
}

// credentialHash identifies a token and extra headers without keeping
// them.
func credentialHash(c credentials) string {
	h := sha256.New()
	h.Write([]byte(c.Token))
	keys := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.Write([]byte{0})
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(c.Headers[k]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pooled is one upstream session and the calls using it.
type pooled struct {
	key   sessionKey
	ready chan struct{} // closed once the session is open or failed to
	cs    *mcp.ClientSession
	err   error

	// Guarded by the pool's mu.
	users   int
	dropped bool // no longer handed out: closed once unused
	closed  bool
	idle    *time.Timer
}

// sessionPool holds the current session of each server.
type sessionPool struct {
	mu       sync.Mutex
	byServer map[string]*pooled
	idleFor  time.Duration
}

func newSessionPool() *sessionPool {
	return &sessionPool{byServer: map[string]*pooled{}, idleFor: sessionIdle}
}

// acquire returns the session for key, opening it with open when there
// is none (one opening for all the calls that wait for it; open's
// context is not any one caller's). The caller releases it.
func (p *sessionPool) acquire(ctx context.Context, key sessionKey, open func() (*mcp.ClientSession, error)) (*pooled, error) {
	p.mu.Lock()
	e := p.byServer[key.server]
	if e != nil && e.key != key {
		p.dropLocked(e)
		e = nil
	}
	if e == nil {
		e = &pooled{key: key, ready: make(chan struct{})}
		p.byServer[key.server] = e
		go p.open(e, open)
	}
	e.users++
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	p.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		p.release(e)
		return nil, ctx.Err()
	}
	if e.err != nil {
		p.release(e)
		return nil, e.err
	}
	return e, nil
}

func (p *sessionPool) open(e *pooled, open func() (*mcp.ClientSession, error)) {
	cs, err := open()
	p.mu.Lock()
	e.cs, e.err = cs, err
	close(e.ready)
	if err != nil {
		p.dropLocked(e)
	}
	p.mu.Unlock()
	if err == nil {
		// A connection that broke ends the session: drop it.
		go func() {
			_ = cs.Wait()
			p.drop(e)
		}()
	}
}

// release ends one call's use of e.
func (p *sessionPool) release(e *pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.users--
	if e.users > 0 {
		return
	}
	if e.dropped {
		p.closeLocked(e)
		return
	}
	e.idle = time.AfterFunc(p.idleFor, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if e.users == 0 && !e.dropped {
			p.dropLocked(e)
		}
	})
}

// drop stops handing e out; it is closed once unused.
func (p *sessionPool) drop(e *pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(e)
}

func (p *sessionPool) dropLocked(e *pooled) {
	if p.byServer[e.key.server] == e {
		delete(p.byServer, e.key.server)
	}
	e.dropped = true
	if e.users == 0 {
		p.closeLocked(e)
	}
}

// closeLocked closes an unused, dropped session (in the background:
// closing may send the upstream a DELETE).
func (p *sessionPool) closeLocked(e *pooled) {
	select {
	case <-e.ready:
	default:
		return // still opening: open drops and closes it
	}
	if e.closed || e.cs == nil {
		return
	}
	e.closed = true
	if e.idle != nil {
		e.idle.Stop()
	}
	go func() { _ = e.cs.Close() }()
}

type probeKey struct{}

// sendProbe watches the HTTP request that carries one call (the first
// POST made under the call's context): whether any of it may have been
// written, and how the upstream answered it.
type sendProbe struct {
	mu          sync.Mutex
	seen        bool // the call's request reached the HTTP transport
	wrote       bool // some of it may have been written to the network
	status      int  // the upstream's status code; 0 without an answer
	namedSesion bool // it named a session (Mcp-Session-Id)
	// progress counts the progress notifications in its answer, when
	// the call relays them (progress.go).
	progress *progressCounter
}

func withProbe(ctx context.Context, p *sendProbe) context.Context {
	return context.WithValue(ctx, probeKey{}, p)
}

// claim makes r the probe's request if it is the first POST under the
// probe's context, and returns r traced.
func (p *sendProbe) claim(r *http.Request) (*http.Request, bool) {
	if r.Method != http.MethodPost {
		return r, false
	}
	p.mu.Lock()
	if p.seen {
		p.mu.Unlock()
		return r, false
	}
	p.seen, p.namedSesion = true, r.Header.Get("Mcp-Session-Id") != ""
	p.mu.Unlock()
	wrote := func() {
		p.mu.Lock()
		p.wrote = true
		p.mu.Unlock()
	}
	// WroteHeaders comes before anything is flushed; WroteRequest also
	// on a failed write (some of it may be out).
	trace := &httptrace.ClientTrace{
		WroteHeaderField: func(string, []string) { wrote() },
		WroteHeaders:     wrote,
		WroteRequest:     func(httptrace.WroteRequestInfo) { wrote() },
		Got1xxResponse:   func(int, textproto.MIMEHeader) error { wrote(); return nil },
	}
	return r.WithContext(httptrace.WithClientTrace(r.Context(), trace)), true
}

func (p *sendProbe) answered(status int) {
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
}

// notSent reports whether the call whose error is err provably did
// nothing upstream: its request never reached the transport, or left
// none of itself on the network, or the upstream answered it 404 for
// the session it named (the SDK's ErrSessionMissing).
func (p *sendProbe) notSent(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.seen:
		return true
	case p.status == 0:
		return !p.wrote
	case p.status == http.StatusNotFound:
		return p.namedSesion && errors.Is(err, mcp.ErrSessionMissing)
	}
	return false
}

// sessionIntact reports whether a call's error leaves its session as it
// was: a JSON-RPC error answer (an unknown tool, invalid arguments), or
// the call's own deadline or cancellation.
func sessionIntact(ctx context.Context, err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire) || ctx.Err() != nil
}

// closeAll drops every session; each closes once its calls have ended.
func (p *sessionPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.byServer {
		p.dropLocked(e)
	}
}
