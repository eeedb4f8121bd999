package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/store"
)

type mcpOrderIn struct {
	OrderID string `json:"order_id" jsonschema:"the order to look up"`
	Email   string `json:"email,omitempty" jsonschema:"the customer's e-mail"`
}

type mcpRefundIn struct {
	OrderID     string `json:"order_id"`
	AmountMinor int64  `json:"amount_minor"`
}

// mcpUpstream is a real MCP server built with the Go SDK, on loopback:
// a low-impact lookup_order (which echoes the customer's e-mail back, as
// real tools do) and a high-impact issue_refund. calls counts the tool
// calls it ran.
type mcpUpstream struct {
	url   string
	calls atomic.Int64
}

func newMCPUpstream(t *testing.T) *mcpUpstream {
	t.Helper()
	u := &mcpUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "lookup_order", Description: "Look up an order by id."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpOrderIn) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order " + in.OrderID + " shipped to " + in.Email}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "issue_refund", Description: "Refund an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpRefundIn) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refunded"}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

type bearerRT struct{ key string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the Go SDK's client to Warden's /mcp with key.
func mcpSession(t *testing.T, in *instance, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: in.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// An agent's MCP client reaches an upstream MCP server through Warden's
// /mcp: it sees only the tools its key's scopes allow, an unclassified
// tool is refused until an admin classifies it, a low-impact call is
// forwarded and its result returned, the audit chain keeps the call with
// the customer's e-mail redacted, bad arguments and a server switched off
// are refused without reaching the upstream, and no key is a 401. (A
// high-impact call waits for approval: mcp_approval_test.go.)
func TestMCPDoor(t *testing.T) {
	in := startWardenDemo(t, nil) // the demo allows 127.0.0.1 (models.AllowedHosts)
	up := newMCPUpstream(t)
	ctx := context.Background()
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
	sealer := in.Agent.Journeys.Sealer()
	if _, err := mcpservers.Create(ctx, in.DB, sealer, admin, mcpservers.Server{Name: "up", URL: up.url, Timeout: 5 * time.Second, Enabled: true}, "tok"); err != nil {
		t.Fatal(err)
	}
	g := mcpservers.NewGateway(in.DB, sealer, nil, nil)
	if _, err := g.Discover(ctx, admin, "up"); err != nil {
		t.Fatal(err)
	}
	_, lookupKey := newKeyIn(t, in, "acme", "lookup-bot", []string{"mcp:up/lookup_order"}, "test")
	_, allKey := newKeyIn(t, in, "acme", "shop-bot", []string{"mcp:up/*"}, "test")
	_, chatKey := newKeyIn(t, in, "acme", "chat-bot", []string{"model:chat"}, "test")

	t.Run("no key is a 401", func(t *testing.T) {
		for _, key := range []string{"", "wk_not_a_key"} {
			req, _ := http.NewRequest(http.MethodPost, in.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("key %q: %d, WWW-Authenticate %q; want 401 with a Bearer challenge", key, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		}
	})

	t.Run("the door is stateless: GET and DELETE are 405", func(t *testing.T) {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(method, in.URL+"/mcp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+allKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s /mcp = %d, want 405", method, resp.StatusCode)
			}
		}
	})

	t.Run("tools/list is filtered by scope", func(t *testing.T) {
		if got := toolNames(t, mcpSession(t, in, lookupKey)); !slices.Equal(got, []string{"up__lookup_order"}) {
			t.Errorf("mcp:up/lookup_order sees %q", got)
		}
		if got := toolNames(t, mcpSession(t, in, allKey)); !slices.Equal(got, []string{"up__issue_refund", "up__lookup_order"}) {
			t.Errorf("mcp:up/* sees %q", got)
		}
		if got := toolNames(t, mcpSession(t, in, chatKey)); len(got) != 0 {
			t.Errorf("a key without mcp scopes sees %q", got)
		}
		cs := mcpSession(t, in, allKey)
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tl.Name == "up__lookup_order" && (tl.Description != "Look up an order by id." || !strings.Contains(mustJSON(t, tl.InputSchema), "order_id")) {
				t.Errorf("up__lookup_order listed as %q with schema %s: want the upstream's", tl.Description, mustJSON(t, tl.InputSchema))
			}
		}
	})

	t.Run("an unclassified tool is refused", func(t *testing.T) {
		text, isErr := callText(t, mcpSession(t, in, allKey), "up__lookup_order", map[string]any{"order_id": "A1"})
		if !isErr || !strings.Contains(text, "not yet classified by an admin") || up.calls.Load() != 0 {
			t.Errorf("unclassified call = %q (error %v), %d upstream calls", text, isErr, up.calls.Load())
		}
	})

	if err := mcpservers.Classify(ctx, in.DB, admin, "up", "lookup_order", mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, in.DB, admin, "up", "issue_refund", mcpservers.Class{Impact: mcpservers.ImpactHigh}); err != nil {
		t.Fatal(err)
	}

	t.Run("a classified low-impact call is forwarded, and audited redacted", func(t *testing.T) {
		text, isErr := callText(t, mcpSession(t, in, lookupKey), "up__lookup_order", map[string]any{"order_id": "A1", "email": "jane.doe@example.com"})
		if isErr || text != "order A1 shipped to jane.doe@example.com" || up.calls.Load() != 1 {
			t.Fatalf("forwarded call = %q (error %v), %d upstream calls", text, isErr, up.calls.Load())
		}
		var details, actorType string
		if err := in.DB.Read().QueryRow(`SELECT details, actor_type FROM audit_events WHERE verb = 'mcp.call' AND subject_id = 'up/lookup_order' ORDER BY seq DESC LIMIT 1`).Scan(&details, &actorType); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(details, "jane.doe") || !strings.Contains(details, "[email:") || !strings.Contains(details, `"outcome":"forwarded"`) ||
			!strings.Contains(details, `"order_id"`) || actorType != audit.ActorKey {
			t.Errorf("audit of the call (%s) = %s; want the outcome and arguments with the e-mail redacted", actorType, details)
		}
	})

	t.Run("the scope is checked on the call too", func(t *testing.T) {
		// Not offered to this key, so not a tool of its server at all.
		_, err := mcpSession(t, in, lookupKey).CallTool(ctx, &mcp.CallToolParams{Name: "up__issue_refund", Arguments: map[string]any{"order_id": "A1", "amount_minor": 100}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") || up.calls.Load() != 1 {
			t.Errorf("a tool outside the key's scopes: %v, %d upstream calls", err, up.calls.Load())
		}
	})

	t.Run("bad arguments are refused before the upstream", func(t *testing.T) {
		text, isErr := callText(t, mcpSession(t, in, lookupKey), "up__lookup_order", map[string]any{"order_id": 42})
		if !isErr || !strings.Contains(text, "input schema") || !strings.Contains(text, "order_id") || up.calls.Load() != 1 {
			t.Errorf("bad arguments: %q (error %v), %d upstream calls", text, isErr, up.calls.Load())
		}
	})

	t.Run("a server switched off is refused", func(t *testing.T) {
		if err := mcpservers.SetEnabled(ctx, in.DB, admin, "up", false); err != nil {
			t.Fatal(err)
		}
		text, isErr := callText(t, mcpSession(t, in, lookupKey), "up__lookup_order", map[string]any{"order_id": "A1"})
		if !isErr || !strings.Contains(text, "switched off") || up.calls.Load() != 1 {
			t.Errorf("switched-off server: %q (error %v), %d upstream calls", text, isErr, up.calls.Load())
		}
		if err := mcpservers.SetEnabled(ctx, in.DB, admin, "up", true); err != nil {
			t.Fatal(err)
		}
		if text, isErr := callText(t, mcpSession(t, in, lookupKey), "up__lookup_order", map[string]any{"order_id": "A2"}); isErr || up.calls.Load() != 2 {
			t.Errorf("switched on again: %q (error %v)", text, isErr)
		}
	})

	t.Run("an upstream that is down is a tool error", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		if _, err := mcpservers.Update(ctx, in.DB, sealer, admin, mcpservers.Server{Name: "up", URL: dead.URL, Timeout: 2 * time.Second}, ""); err != nil {
			t.Fatal(err)
		}
		text, isErr := callText(t, mcpSession(t, in, lookupKey), "up__lookup_order", map[string]any{"order_id": "A3"})
		if !isErr || !strings.HasPrefix(text, "The MCP server up failed") || up.calls.Load() != 2 {
			t.Errorf("upstream down: %q (error %v)", text, isErr)
		}
	})

	t.Run("every call is in the audit chain", func(t *testing.T) {
		rows, err := storeStrings(in, `SELECT details FROM audit_events WHERE verb = 'mcp.call' ORDER BY seq`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			var d struct{ Tool, Outcome string }
			if err := json.Unmarshal([]byte(r), &d); err != nil {
				t.Fatal(err)
			}
			got = append(got, d.Tool+" "+d.Outcome)
		}
		want := []string{"lookup_order refused", "lookup_order forwarded", "lookup_order refused",
			"lookup_order refused", "lookup_order forwarded", "lookup_order failed"}
		if !slices.Equal(got, want) {
			t.Errorf("mcp.call events = %q\nwant %q", got, want)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func storeStrings(in *instance, query string) ([]string, error) {
	return store.Strings(context.Background(), in.DB.Read(), query)
}
