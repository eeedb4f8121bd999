package mcpservers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tools"
)

// Concurrent calls on the shared upstream session each get their own
// progress, all of it, in order, and none of another call's; a call
// without a relay sends the upstream no progress token.
func TestProgressRelayed(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	type in struct {
		N string `json:"n"`
	}
	var mu sync.Mutex
	var tokens []any
	mcp.AddTool(srv, &mcp.Tool{Name: "work", Description: "Work in steps."},
		func(ctx context.Context, req *mcp.CallToolRequest, arg in) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			mu.Lock()
			tokens = append(tokens, tok)
			mu.Unlock()
			for i := range 3 {
				if tok != nil {
					// The last one right before the answer.
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i * 50), Total: 100, Message: arg.N})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + arg.N}}}, nil, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)

	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := models.AllowHosts(ctx, db, consoleAdmin, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, db, sealer, consoleAdmin, Server{Name: "slow", URL: up.URL, Timeout: 5 * time.Second, Enabled: true}, ""); err != nil {
		t.Fatal(err)
	}
	g := NewGateway(db, sealer, nil, nil)
	work := tools.Tool{Name: "slow__work"}

	const calls = 8
	got := make([][]string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := fmt.Sprint(i)
			var seen []string
			var smu sync.Mutex
			cctx := withRelay(ctx, func(p *mcp.ProgressNotificationParams) {
				smu.Lock()
				seen = append(seen, fmt.Sprintf("%s:%g/%g", p.Message, p.Progress, p.Total))
				smu.Unlock()
			})
			if _, err := g.Execute(cctx, work, tools.Call{Tool: work.Name, Args: json.RawMessage(`{"n":"` + n + `"}`)}); err != nil {
				t.Error(err)
			}
			smu.Lock()
			got[i] = slices.Clone(seen)
			smu.Unlock()
		}()
	}
	wg.Wait()
	for i, seen := range got {
		want := []string{fmt.Sprintf("%d:0/100", i), fmt.Sprintf("%d:50/100", i), fmt.Sprintf("%d:100/100", i)}
		if !slices.Equal(seen, want) {
			t.Errorf("call %d relayed %q, want %q", i, seen, want)
		}
	}

	if _, err := g.Execute(ctx, work, tools.Call{Tool: work.Name, Args: json.RawMessage(`{"n":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) != calls+1 || tokens[calls] != nil {
		t.Errorf("tokens the upstream received: %v; want one per relayed call and none without a relay", tokens)
	}
	distinct := map[any]bool{}
	for _, tok := range tokens[:calls] {
		distinct[tok] = true
	}
	if len(distinct) != calls {
		t.Errorf("the upstream received %d distinct tokens for %d calls", len(distinct), calls)
	}
}
