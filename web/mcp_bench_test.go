package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/tools/sim/mcpshop"
)

// BenchmarkMCPDoorLookup is one low-impact tools/call (the example shop's
// lookup_order) at a time through Warden's /mcp door, next to the same
// call to the shop directly; its CPU profile shows where the door's time
// goes. bench/mcp/run.sh measures the same call under load against the
// binaries.
//
//	go test -run '^$' -bench MCPDoorLookup -cpuprofile cpu.out ./web/
func BenchmarkMCPDoorLookup(b *testing.B) {
	in := startWardenDemo(b, nil)
	in.waitReady(b)
	ctx := context.Background()
	shop := mcpshop.New()
	srv := httptest.NewServer(shop.Handler())
	defer srv.Close()
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
	sealer := in.Agent.Journeys.Sealer()
	if _, err := mcpservers.Create(ctx, in.DB, sealer, admin, mcpservers.Server{Name: "shop", URL: srv.URL, Timeout: 10 * time.Second, Enabled: true}, ""); err != nil {
		b.Fatal(err)
	}
	if _, err := mcpservers.NewGateway(in.DB, sealer, nil, nil).Discover(ctx, admin, "shop"); err != nil {
		b.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, in.DB, admin, "shop", mcpshop.ToolLookupOrder, mcpservers.Class{Impact: mcpservers.ImpactLow}); err != nil {
		b.Fatal(err)
	}
	_, key := newKeyIn(b, in, "acme", "mcp bench", []string{"mcp:shop/*"}, "test")

	for _, tc := range []struct{ name, url, tool, key string }{
		{"direct", srv.URL, mcpshop.ToolLookupOrder, ""},
		{"warden", in.URL + "/mcp", "shop__" + mcpshop.ToolLookupOrder, key},
	} {
		b.Run(tc.name, func(b *testing.B) {
			hc := http.DefaultClient
			if tc.key != "" {
				hc = &http.Client{Transport: bearerRT{tc.key}}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: tc.url, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"order_id": "ORD-1008"}}
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "ORD-1008") {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
		})
	}
}
