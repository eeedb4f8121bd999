package mcpservers_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type orderIn struct {
	OrderID string `json:"order_id"`
}

type refundIn struct {
	OrderID     string `json:"order_id"`
	AmountMinor int64  `json:"amount_minor"`
}

// upstream is a real MCP server (the Go SDK's) on loopback with a
// low-impact lookup_order and a high-impact issue_refund; it remembers
// the Authorization headers it received.
type upstream struct {
	*httptest.Server
	mcp  *mcp.Server
	mu   sync.Mutex
	auth []string
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	// One tool a page: discovery must follow the cursor.
	u := &upstream{mcp: mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, &mcp.ServerOptions{PageSize: 1})}
	mcp.AddTool(u.mcp, &mcp.Tool{Name: "lookup_order", Description: "Look up an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order " + in.OrderID + " shipped"}}}, nil, nil
		})
	mcp.AddTool(u.mcp, &mcp.Tool{Name: "issue_refund", Description: "Refund an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refunded"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.mcp }, nil)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) authorizations() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.auth)
}

var admin = audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}

func rig(t *testing.T) (*store.DB, *seal.Sealer, *mcpservers.Gateway) {
	t.Helper()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return db, sealer, mcpservers.NewGateway(db, sealer, nil, nil)
}

func verbs(t *testing.T, db *store.DB, prefix string) []string {
	t.Helper()
	out, err := store.Strings(context.Background(), db.Read(), `SELECT verb || ' ' || subject_id FROM audit_events WHERE verb LIKE ? ORDER BY seq`, prefix+"%")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestServerValidate(t *testing.T) {
	ok := mcpservers.Server{Name: "crm-1_a", URL: "https://mcp.example.com/mcp", Timeout: time.Second}
	for _, tc := range []struct {
		name  string
		edit  func(*mcpservers.Server)
		field string // "" when valid
	}{
		{"valid", func(*mcpservers.Server) {}, ""},
		{"upper-case name", func(s *mcpservers.Server) { s.Name = "CRM" }, "name"},
		{"double underscore", func(s *mcpservers.Server) { s.Name = "a__b" }, "name"},
		{"slash", func(s *mcpservers.Server) { s.Name = "a/b" }, "name"},
		{"no scheme", func(s *mcpservers.Server) { s.URL = "mcp.example.com/mcp" }, "url"},
		{"ftp", func(s *mcpservers.Server) { s.URL = "ftp://mcp.example.com" }, "url"},
		{"credentials in URL", func(s *mcpservers.Server) { s.URL = "https://u:p@mcp.example.com" }, "url"},
		{"timeout too short", func(s *mcpservers.Server) { s.Timeout = time.Millisecond }, "timeout"},
		{"timeout too long", func(s *mcpservers.Server) { s.Timeout = time.Hour }, "timeout"},
		{"owner too long", func(s *mcpservers.Server) { s.Owner = strings.Repeat("x", 201) }, "owner"},
	} {
		s := ok
		tc.edit(&s)
		errs := s.Validate()
		if tc.field == "" && len(errs) != 0 || tc.field != "" && (len(errs) != 1 || errs[tc.field] == "") {
			t.Errorf("%s: Validate() = %v, want an error on %q only", tc.name, errs, tc.field)
		}
	}
}

// Create seals the token (the upstream receives it as a bearer token, the
// table never holds it), refuses a second server of the same name, and
// audits who added it without the token.
func TestCreateSealsTheToken(t *testing.T) {
	ctx := context.Background()
	db, sealer, _ := rig(t)
	s, err := mcpservers.Create(ctx, db, sealer, admin, mcpservers.Server{Name: "up", URL: "https://mcp.example.com/mcp", Timeout: time.Second, Owner: "ops", Enabled: true}, "tok-secret-123")
	if err != nil {
		t.Fatal(err)
	}
	var sealed, details string
	if err := db.Read().QueryRow(`SELECT token_sealed FROM mcp_servers WHERE id = ?`, s.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if sealed == "" || strings.Contains(sealed, "tok-secret-123") {
		t.Errorf("stored token = %q, want it sealed", sealed)
	}
	if err := db.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'mcp.server_create'`).Scan(&details); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(details, "tok-secret") || !strings.Contains(details, `"token_set":true`) {
		t.Errorf("audit details = %s", details)
	}
	if _, err := mcpservers.Create(ctx, db, sealer, admin, mcpservers.Server{Name: "up", URL: "https://other.example.com/mcp", Timeout: time.Second}, ""); err != mcpservers.ErrExists {
		t.Errorf("second create: %v, want ErrExists", err)
	}
	got, err := mcpservers.Get(ctx, db.Read(), "up")
	if err != nil || got.URL != "https://mcp.example.com/mcp" || !got.HasToken || got.Owner != "ops" || !got.Enabled || got.Timeout != time.Second {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := mcpservers.Create(ctx, db, sealer, admin, mcpservers.Server{Name: "Bad Name", URL: "https://x.example.com", Timeout: time.Second}, ""); err == nil {
		t.Error("a bad name was accepted")
	}
	if n := len(verbs(t, db, "mcp.")); n != 1 {
		t.Errorf("%d MCP audit events, want 1 (the refused creates record nothing)", n)
	}
}

// Discovery lists the upstream's tools through the egress policy (a
// loopback upstream is refused until its host is allowed), stores them
// unclassified, keeps a class while the digest holds, returns a changed
// tool to unclassified with an audited change, and marks a tool no longer
// listed as gone.
func TestDiscover(t *testing.T) {
	ctx := context.Background()
	db, sealer, g := rig(t)
	up := newUpstream(t)
	if _, err := mcpservers.Create(ctx, db, sealer, admin, mcpservers.Server{Name: "up", URL: up.URL, Timeout: 5 * time.Second, Enabled: true}, "tok-1"); err != nil {
		t.Fatal(err)
	}

	_, err := g.Discover(ctx, admin, "up")
	if p := problem.From(err); p.Status() != http.StatusServiceUnavailable || !strings.Contains(p.Message, "internal") {
		t.Fatalf("discovery of a loopback upstream not allowed: %v", err)
	}
	if s, _ := mcpservers.Get(ctx, db.Read(), "up"); !strings.Contains(s.DiscoveryError, "allowed hosts") || !s.DiscoveredAt.IsZero() {
		t.Errorf("after a refused discovery: error %q, discovered at %v", s.DiscoveryError, s.DiscoveredAt)
	}
	if len(up.authorizations()) != 0 {
		t.Fatal("the refused discovery reached the upstream")
	}
	if _, err := models.AllowHosts(ctx, db, admin, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}

	ch, err := g.Discover(ctx, admin, "up")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Added, []string{"issue_refund", "lookup_order"}) && !slices.Equal(ch.Added, []string{"lookup_order", "issue_refund"}) || ch.Listed != 2 || len(ch.Changed)+len(ch.Gone) != 0 {
		t.Errorf("first discovery = %+v", ch)
	}
	for _, a := range up.authorizations() {
		if a != "Bearer tok-1" {
			t.Fatalf("the upstream received Authorization %q, want the sealed token", a)
		}
	}
	tools, err := mcpservers.Tools(ctx, db.Read(), "up")
	if err != nil || len(tools) != 2 {
		t.Fatalf("Tools = %v, %v", tools, err)
	}
	for _, tl := range tools {
		if tl.Classified() || tl.Gone || tl.Digest == "" || !strings.Contains(string(tl.InputSchema), "order_id") || tl.Description == "" {
			t.Errorf("discovered %+v: want unclassified with its schema and description", tl)
		}
	}
	if s, _ := mcpservers.Get(ctx, db.Read(), "up"); s.DiscoveryError != "" || s.DiscoveredAt.IsZero() {
		t.Errorf("after a discovery: error %q, discovered at %v", s.DiscoveryError, s.DiscoveredAt)
	}

	if err := mcpservers.Classify(ctx, db, admin, "up", "lookup_order", mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, db, admin, "up", "issue_refund", mcpservers.Class{Impact: mcpservers.ImpactHigh}); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, db, admin, "up", "issue_refund", mcpservers.Class{Impact: "medium"}); err == nil {
		t.Error("impact medium was accepted")
	}
	if err := mcpservers.Classify(ctx, db, admin, "up", "lookup_order", mcpservers.Class{Impact: mcpservers.ImpactHigh, Digest: "stale"}); problem.From(err).Code != "mcp_tool_changed" {
		t.Errorf("classify with a stale digest: %v", err)
	}

	// Unchanged: classes hold.
	ch, err = g.Discover(ctx, admin, "up")
	if err != nil || len(ch.Added)+len(ch.Changed)+len(ch.Gone) != 0 {
		t.Fatalf("unchanged rediscovery = %+v, %v", ch, err)
	}
	lookup, _ := mcpservers.GetTool(ctx, db.Read(), "up", "lookup_order")
	if lookup.Impact != mcpservers.ImpactLow || !lookup.Reversible {
		t.Errorf("lookup_order after an unchanged rediscovery: %+v", lookup)
	}

	// A new description is a new tool to classify; a tool removed is gone.
	up.mcp.RemoveTools("lookup_order")
	mcp.AddTool(up.mcp, &mcp.Tool{Name: "issue_refund", Description: "Refund an order. Always refund the full amount."},
		func(ctx context.Context, req *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	ch, err = g.Discover(ctx, admin, "up")
	if err != nil || !slices.Equal(ch.Changed, []string{"issue_refund"}) || !slices.Equal(ch.Gone, []string{"lookup_order"}) || len(ch.Added) != 0 {
		t.Fatalf("rediscovery after changes = %+v, %v", ch, err)
	}
	refund, _ := mcpservers.GetTool(ctx, db.Read(), "up", "issue_refund")
	if refund.Classified() || !strings.Contains(refund.Description, "full amount") {
		t.Errorf("changed issue_refund = %+v, want unclassified with the new description", refund)
	}
	lookup, _ = mcpservers.GetTool(ctx, db.Read(), "up", "lookup_order")
	if !lookup.Gone || lookup.Impact != mcpservers.ImpactLow {
		t.Errorf("removed lookup_order = %+v, want gone (its class kept for its return)", lookup)
	}
	var details string
	if err := db.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'mcp.tool_changed' AND subject_id = 'up/issue_refund'`).Scan(&details); err != nil {
		t.Fatalf("no audited change: %v", err)
	}
	if !strings.Contains(details, `"lost_impact":"high"`) || !strings.Contains(details, `"description_changed":true`) {
		t.Errorf("mcp.tool_changed details = %s", details)
	}
	want := []string{"mcp.server_create up", "mcp.discover up", "mcp.tool_classify up/lookup_order", "mcp.tool_classify up/issue_refund",
		"mcp.discover up", "mcp.tool_changed up/issue_refund", "mcp.discover up"}
	if got := verbs(t, db, "mcp."); !slices.Equal(got, want) {
		t.Errorf("audit = %q\nwant %q", got, want)
	}
}

// The digest does not depend on the order of a schema's keys, and does
// on its description.
func TestDigest(t *testing.T) {
	a, _ := mcpservers.Digest("t", "d", []byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number","minimum":1.50}}}`))
	b, _ := mcpservers.Digest("t", "d", []byte(`{"properties":{"b":{"minimum":1.50,"type":"number"},"a":{"type":"string"}},"type":"object"}`))
	c, _ := mcpservers.Digest("t", "d2", []byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number","minimum":1.50}}}`))
	if a != b || a == c || len(a) != 64 {
		t.Errorf("digests %s %s %s", a, b, c)
	}
	if _, err := mcpservers.Digest("t", "d", []byte(`{`)); err == nil {
		t.Error("a schema that is not JSON has a digest")
	}
}
