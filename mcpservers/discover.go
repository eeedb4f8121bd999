package mcpservers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/egress"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// Gateway discovers upstream tools and serves the /mcp door.
type Gateway struct {
	db       *store.DB
	sealer   *seal.Sealer
	redactor *redact.Redactor // nil: arguments and results are not recorded at all
	log      *slog.Logger
	version  string

	egressMu sync.Mutex
	egress   *upstreamClient // the client for the allowed hosts last read

	// provider is the gateway behind the runtime's guard (SetGuard): a
	// breaker and a bulkhead per server, a span per call.
	provider tools.Provider
	guard    *tools.Guard
	// consoleURL is where people open an action: the public URL.
	consoleURL string
	// sessions are the upstream sessions forwarded calls share (pool.go).
	sessions *sessionPool
	// relays are the forwarded calls whose clients asked for progress,
	// by the upstream progress token of each (progress.go).
	relays sync.Map
}

// upstreamClient is the HTTP client for one list of allowed hosts, as the
// model gateway keeps one: a host taken off the list is never reached
// again through a kept connection.
type upstreamClient struct {
	hosts  string
	client *http.Client
}

// NewGateway returns a gateway over db. Without a redactor, calls are
// audited without their arguments and results.
func NewGateway(db *store.DB, sealer *seal.Sealer, redactor *redact.Redactor, log *slog.Logger) *Gateway {
	if log == nil {
		log = slog.Default()
	}
	g := &Gateway{db: db, sealer: sealer, redactor: redactor, log: log, version: "1", sessions: newSessionPool()}
	g.provider = g
	return g
}

// Breaker is the state of the guard's breaker in front of a server
// ("closed", "open", "half-open"), or "" before its first call.
func (g *Gateway) Breaker(server string) string {
	if g.guard == nil {
		return ""
	}
	for _, h := range g.guard.Health() {
		if h.Name == "mcp:"+server {
			return h.State
		}
	}
	return ""
}

// SetGuard puts the gateway's forwarded calls behind guard (the one the
// runtime's tool calls pass) and returns the guarded provider, which the
// runtime registers as provider "mcp". Call it once, at start-up.
func (g *Gateway) SetGuard(guard *tools.Guard) tools.Provider {
	g.guard, g.provider = guard, guard.Wrap(g)
	return g.provider
}

// Close ends the gateway's sessions with upstream servers (each once its
// calls in flight have ended). Call it at shutdown.
func (g *Gateway) Close() { g.sessions.closeAll() }

// SetConsoleURL sets the public URL the console answers at: waiting
// clients are told the action's page there.
func (g *Gateway) SetConsoleURL(u string) { g.consoleURL = u }

// httpClient returns the client for upstream MCP servers: the egress
// policy of package egress with the model gateway's allowed hosts
// (models.AllowedHosts: one list for every on-premises upstream), so an
// upstream cannot be loopback, private, link-local or another internal
// address unless its host is listed; no redirect is followed, no proxy
// used.
func (g *Gateway) httpClient(ctx context.Context) (*http.Client, error) {
	list, err := models.AllowedHosts(ctx, g.db.Read())
	if err != nil {
		return nil, err
	}
	hosts := strings.Join(list, "\n")
	g.egressMu.Lock()
	defer g.egressMu.Unlock()
	if g.egress != nil && g.egress.hosts == hosts {
		return g.egress.client, nil
	}
	listed := map[string]bool{}
	for _, h := range list {
		listed[h] = true
	}
	t := egress.Policy{AllowHost: func(h string) bool { return listed[h] }}.Transport()
	t.MaxIdleConnsPerHost = 64
	if old := g.egress; old != nil {
		defer old.client.CloseIdleConnections()
	}
	g.egress = &upstreamClient{hosts: hosts, client: &http.Client{Transport: t, CheckRedirect: egress.NoRedirects}}
	return g.egress.client, nil
}

// upstreamTransport adds the upstream's token and extra headers to
// every request, and lets a call's sendProbe watch the request that
// carries it (pool.go).
type upstreamTransport struct {
	cred credentials
	base http.RoundTripper
}

func (b upstreamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range b.cred.Headers {
		r.Header.Set(k, v)
	}
	if b.cred.Token != "" {
		r.Header.Set("Authorization", "Bearer "+b.cred.Token)
	}
	p, _ := r.Context().Value(probeKey{}).(*sendProbe)
	claimed := false
	if p != nil {
		r, claimed = p.claim(r)
	}
	resp, err := b.base.RoundTrip(r)
	if claimed && err == nil {
		p.answered(resp.StatusCode)
		if p.progress != nil {
			resp.Body = p.progress.wrap(resp.Body)
		}
	}
	return resp, err
}

// connect opens an MCP session with an upstream over Streamable HTTP
// (the Go SDK's client), with its token as the Authorization header and
// its extra headers. The caller closes it.
func (g *Gateway) connect(ctx context.Context, s Server, cred credentials) (*mcp.ClientSession, error) {
	base, err := g.httpClient(ctx)
	if err != nil {
		return nil, err
	}
	return g.connectWith(ctx, s, cred, base)
}

// connectWith is connect over base, the egress client.
func (g *Gateway) connectWith(ctx context.Context, s Server, cred credentials, base *http.Client) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: upstreamTransport{cred: cred, base: base.Transport}, CheckRedirect: egress.NoRedirects}
	client := mcp.NewClient(&mcp.Implementation{Name: "warden", Version: g.version}, &mcp.ClientOptions{ProgressNotificationHandler: g.onProgress})
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
}

// Changes is what a discovery found different from the last one.
type Changes struct {
	Added   []string // tools listed for the first time (unclassified)
	Changed []string // tools whose digest changed: back to unclassified
	Gone    []string // tools no longer listed
	Back    []string // tools gone before and listed again unchanged: their class holds
	Listed  int      // tools the upstream listed
}

// MaxTools bounds the tools one server may list.
const MaxTools = 1000

// Discover lists an upstream's tools (every page) and stores them: a new
// tool is unclassified, a tool whose digest changed returns to
// unclassified (mcp.tool_changed, with the old and new digest and the
// class it lost), a tool no longer listed is marked gone; the discovery
// itself is audited (mcp.discover) with what changed. A failure to reach
// the upstream is stored as the server's discovery error and returned as
// a 503 problem; nothing else changes.
func (g *Gateway) Discover(ctx context.Context, actor audit.Actor, name string) (Changes, error) {
	s, cred, err := withCredentials(ctx, g.db.Read(), g.sealer, name)
	if err != nil {
		return Changes{}, err
	}
	listed, err := g.list(ctx, s, cred)
	if err != nil {
		msg := upstreamError(err)
		if uerr := g.db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET discovery_error = ? WHERE id = ?`, msg, s.ID)
			return err
		}); uerr != nil {
			g.log.Error("record MCP discovery error", "server", s.Name, "err", uerr)
		}
		return Changes{}, problem.Unavailable("mcp_discovery_failed", "Warden could not list the tools of "+s.Name+": "+msg, 0)
	}
	var ch Changes
	err = g.db.Transact(ctx, func(tx *store.Tx) error {
		ch = Changes{Listed: len(listed)} // a retried run starts afresh (store.Transact)
		old, err := Tools(ctx, tx, s.Name)
		if err != nil {
			return err
		}
		byName := map[string]Tool{}
		for _, t := range old {
			byName[t.Name] = t
		}
		now := store.Now()
		seen := map[string]bool{}
		for _, l := range listed {
			seen[l.Name] = true
			t, ok := byName[l.Name]
			switch {
			case !ok:
				ch.Added = append(ch.Added, l.Name)
				if _, err := tx.ExecContext(ctx, `INSERT INTO mcp_tools (server_id, name, description, input_schema, digest, impact, reversible, gone, discovered_at, updated_at)
					VALUES (?, ?, ?, ?, ?, NULL, NULL, 0, ?, ?)`, s.ID, l.Name, l.Description, string(l.InputSchema), l.Digest, now, now); err != nil {
					return fmt.Errorf("store MCP tool %s: %w", l.Name, err)
				}
			case t.Digest != l.Digest:
				ch.Changed = append(ch.Changed, l.Name)
				if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET description = ?, input_schema = ?, digest = ?, impact = NULL, reversible = NULL, gone = 0,
					discovered_at = ?, updated_at = ? WHERE server_id = ? AND name = ?`, l.Description, string(l.InputSchema), l.Digest, now, now, s.ID, l.Name); err != nil {
					return fmt.Errorf("store MCP tool %s: %w", l.Name, err)
				}
				if _, err := audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.tool_changed", Subject: audit.Subject{Type: "mcp_tool", ID: s.Name + "/" + l.Name},
					Details: map[string]any{"old_digest": t.Digest, "new_digest": l.Digest, "description_changed": t.Description != l.Description,
						"lost_impact": t.Impact, "lost_reversible": t.Classified() && t.Reversible}}); err != nil {
					return err
				}
			default:
				if t.Gone {
					ch.Back = append(ch.Back, l.Name)
				}
				if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET gone = 0, discovered_at = ? WHERE server_id = ? AND name = ?`, now, s.ID, l.Name); err != nil {
					return fmt.Errorf("store MCP tool %s: %w", l.Name, err)
				}
			}
		}
		for _, t := range old {
			if seen[t.Name] || t.Gone {
				continue
			}
			ch.Gone = append(ch.Gone, t.Name)
			if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET gone = 1, updated_at = ? WHERE server_id = ? AND name = ?`, now, s.ID, t.Name); err != nil {
				return fmt.Errorf("mark MCP tool %s gone: %w", t.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET discovered_at = ?, discovery_error = '' WHERE id = ?`, now, s.ID); err != nil {
			return fmt.Errorf("record MCP discovery: %w", err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.discover", Subject: audit.Subject{Type: "mcp_server", ID: s.Name},
			Details: map[string]any{"listed": ch.Listed, "added": ch.Added, "changed": ch.Changed, "gone": ch.Gone, "back": ch.Back}})
		return err
	})
	return ch, err
}

// list asks the upstream for its tools, every page, with their digests.
func (g *Gateway) list(ctx context.Context, s Server, cred credentials) ([]Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cs, err := g.connect(ctx, s, cred)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var out []Tool
	seen := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if len(out) == MaxTools {
			return nil, fmt.Errorf("the server lists more than %d tools", MaxTools)
		}
		if t.Name == "" || seen[t.Name] {
			return nil, fmt.Errorf("the server lists a tool without a name, or one name twice (%q)", t.Name)
		}
		seen[t.Name] = true
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("the input schema of %s: %w", t.Name, err)
		}
		digest, err := Digest(t.Name, t.Description, schema)
		if err != nil {
			return nil, err
		}
		out = append(out, Tool{ServerID: s.ID, Server: s.Name, Name: t.Name, Description: t.Description, InputSchema: schema, Digest: digest})
	}
	return out, nil
}

// upstreamError is what an admin or agent is told about a failure to
// reach an upstream: the egress refusal in Warden's words, a timeout as
// such, otherwise the SDK's message, bounded.
func upstreamError(err error) string {
	switch {
	case errors.Is(err, egress.ErrInternal):
		return "its address is internal (loopback, private or link-local) and its host is not among the allowed hosts of the Models page"
	case errors.Is(err, context.DeadlineExceeded):
		return "it did not answer within its timeout"
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}
