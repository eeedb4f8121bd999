package web

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/tools/sim/mcpshop"
)

// mcpExampleDir is the TypeScript example agent whose tools come through
// Warden's /mcp door.
var mcpExampleDir = filepath.Join("..", "examples", "openai-agents-mcp-refund")

// requireMCPExample skips the test when the example's dependencies are
// not installed (npm ci --prefix examples/openai-agents-mcp-refund),
// except in CI, where .ci/run installs them and a missing install is a
// failure.
func requireMCPExample(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(mcpExampleDir, "node_modules", "@openai", "agents"))
	if err == nil && statErr == nil {
		return node
	}
	msg := "the MCP example agent needs node and its dependencies: run npm ci --prefix examples/openai-agents-mcp-refund"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (node: %v, dependencies: %v)", msg, err, statErr)
	}
	t.Skip(msg)
	return ""
}

// mcpExampleRig is a real Warden (the dev demo) with the example shop
// (mcpshop) registered as the MCP server "shop" and discovered, its
// refund-agent deployment pointed at a fake upstream the test can see,
// and a key for the example: model:refund-agent and mcp:shop/*.
type mcpExampleRig struct {
	in    *instance
	shop  *mcpshop.Shop
	fake  *fakeupstream.Server
	key   string
	keyID string
	admin audit.Actor
}

func newMCPExampleRig(t *testing.T) *mcpExampleRig {
	t.Helper()
	in := startWardenDemo(t, nil) // the demo allows 127.0.0.1 (models.AllowedHosts)
	in.waitReady(t)
	ctx := context.Background()
	r := &mcpExampleRig{in: in, shop: mcpshop.New(), fake: fakeupstream.New(), admin: audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}}
	mux := http.NewServeMux()
	mux.Handle("/mcp", r.shop.Handler())
	shopSrv := httptest.NewServer(mux)
	t.Cleanup(shopSrv.Close)
	up := httptest.NewServer(r.fake)
	t.Cleanup(up.Close)

	d, err := models.Get(ctx, in.DB.Read(), "refund-agent")
	if err != nil {
		t.Fatal(err)
	}
	d.BaseURL = up.URL + "/v1"
	if _, err := models.Update(ctx, in.DB, in.Agent.Journeys.Sealer(), audit.Actor{Type: audit.ActorSystem, ID: "test"}, d, ""); err != nil {
		t.Fatal(err)
	}
	sealer := in.Agent.Journeys.Sealer()
	if _, err := mcpservers.Create(ctx, in.DB, sealer, r.admin, mcpservers.Server{Name: "shop", URL: shopSrv.URL + "/mcp", Timeout: 10 * time.Second, Owner: "payments", Enabled: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpservers.NewGateway(in.DB, sealer, nil, nil).Discover(ctx, r.admin, "shop"); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, in.DB, r.admin, "shop", mcpshop.ToolLookupOrder, mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
		t.Fatal(err)
	}
	k, key := newKeyIn(t, in, "acme", "openai agents mcp example", []string{"model:refund-agent", "mcp:shop/*"}, "test")
	r.key, r.keyID = key, k.ID
	return r
}

// exampleRun is the example agent running under Node, its stdout read
// line by line.
type exampleRun struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr syncBuffer
	mu     sync.Mutex
	out    strings.Builder
	cancel context.CancelFunc
}

func (r *mcpExampleRig) start(t *testing.T, node, request string) *exampleRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	e := &exampleRun{lines: make(chan string, 64), cancel: cancel}
	t.Cleanup(cancel)
	e.cmd = exec.CommandContext(ctx, node, "--import", "tsx", "agent.ts", request)
	e.cmd.Dir = mcpExampleDir
	e.cmd.Env = append(os.Environ(), "WARDEN_URL="+r.in.URL, "WARDEN_KEY="+r.key, "WARDEN_MODEL=refund-agent", "WARDEN_APPROVAL_TIMEOUT=150")
	e.cmd.Stderr = &e.stderr
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(e.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			e.mu.Lock()
			e.out.WriteString(sc.Text() + "\n")
			e.mu.Unlock()
			e.lines <- sc.Text()
		}
	}()
	return e
}

func (e *exampleRun) printed() string { e.mu.Lock(); defer e.mu.Unlock(); return e.out.String() }

// wait waits for the agent to end and returns what it printed; the last
// line is its answer.
func (e *exampleRun) wait(t *testing.T) (all, answer string) {
	t.Helper()
	for range e.lines {
	}
	if err := e.cmd.Wait(); err != nil {
		t.Fatalf("example: %v; stdout:\n%s\nstderr:\n%s", err, e.printed(), e.stderr.String())
	}
	all = e.printed()
	t.Logf("the example printed:\n%s", all)
	trimmed := strings.TrimSpace(all)
	return all, strings.TrimSpace(trimmed[strings.LastIndex(trimmed, "\n")+1:])
}

// modelCallsUnder counts the model calls recorded under the key.
func (r *mcpExampleRig) modelCallsUnder(t *testing.T) []models.Call {
	t.Helper()
	calls, err := models.Calls(context.Background(), r.in.DB.Read(), nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	var mine []models.Call
	for _, c := range calls {
		if c.KeyID == r.keyID {
			mine = append(mine, c)
		}
	}
	return mine
}

// TestOpenAIAgentsMCPExampleLooksUpThroughWarden runs the example agent
// (examples/openai-agents-mcp-refund: @openai/agents under Node, its tools
// from MCPServerStreamableHttp on Warden's /mcp, its model Warden's chat
// door with the fake upstream's scripted refund agent) against a real
// Warden fronting the example shop. The agent sees the shop's tools as
// shop__TOOL, its lookup is forwarded to the shop and the result reaches
// the model, and its refund, of a tool no admin classified yet, is
// refused by Warden without reaching the shop; the agent reports the
// refusal.
func TestOpenAIAgentsMCPExampleLooksUpThroughWarden(t *testing.T) {
	node := requireMCPExample(t)
	r := newMCPExampleRig(t)

	run := r.start(t, node, "Refund order ORD-1008: the laptop arrived with a cracked screen.")
	all, answer := run.wait(t)
	if !strings.Contains(all, "Tools through Warden: shop__issue_refund, shop__lookup_order") && !strings.Contains(all, "Tools through Warden: shop__lookup_order, shop__issue_refund") {
		t.Errorf("the agent did not list the shop's tools as shop__TOOL; stdout:\n%s", all)
	}
	if !strings.HasPrefix(answer, "Refund outcome: ") || !strings.Contains(answer, "Warden refused this call") || !strings.Contains(answer, "not yet classified") {
		t.Errorf("the agent's answer = %q, want Warden's refusal of the unclassified refund", answer)
	}
	if n := r.shop.LookupCalls(); n != 1 {
		t.Errorf("lookups at the shop = %d, want 1", n)
	}
	if n := r.shop.RefundCalls(); n != 0 {
		t.Errorf("refund calls at the shop = %d, want none: the tool is not classified", n)
	}

	// The model saw the shop's tools and the lookup's result: the second
	// turn's request carries the order's amount from the shop.
	seen := r.fake.Seen()
	if len(seen) != 3 {
		t.Fatalf("model requests = %d, want 3 (lookup, refund, report)", len(seen))
	}
	if b := string(seen[0].Body); !strings.Contains(b, `"shop__lookup_order"`) || !strings.Contains(b, `"shop__issue_refund"`) {
		t.Errorf("the first model request does not offer the shop's tools: %s", b)
	}
	if b := string(seen[1].Body); seen[1].LastRole != "tool" || !strings.Contains(b, `amount_minor`) || !strings.Contains(b, `124900`) {
		t.Errorf("the second model request does not carry the lookup's result: %s", b)
	}
	if mine := r.modelCallsUnder(t); len(mine) != 3 {
		t.Errorf("model calls under the key = %d, want 3", len(mine))
	}

	// Both calls are in the audit chain under the key, the customer's
	// e-mail in the lookup's result redacted.
	events, err := storeStrings(r.in, `SELECT subject_id || ' ' || actor_id || ' ' || details FROM audit_events WHERE verb = 'mcp.call' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || !strings.HasPrefix(events[0], "shop/lookup_order "+r.keyID+" ") || !strings.Contains(events[0], `"forwarded"`) ||
		!strings.HasPrefix(events[1], "shop/issue_refund "+r.keyID+" ") || !strings.Contains(events[1], `"refused"`) {
		t.Errorf("mcp.call events = %q, want the forwarded lookup and the refused refund under the key", events)
	}
	if len(events) > 0 && (strings.Contains(events[0], "lotte.peeters@example.com") || !strings.Contains(events[0], "[email:")) {
		t.Errorf("the lookup's audit event does not redact the customer's e-mail: %s", events[0])
	}
}

// TestOpenAIAgentsMCPExampleRefundsAfterTwoApprovals runs the example
// agent through a high-impact MCP call: shop__issue_refund of $1,249.00,
// classified high with its money arguments, waits in Warden (the request
// held open, progress notifications naming the action's page), alice
// approves in the console and the shop still sees nothing, bob approves,
// and Warden forwards the refund to the shop once and returns its result
// to the waiting agent, which reports the refund.
func TestOpenAIAgentsMCPExampleRefundsAfterTwoApprovals(t *testing.T) {
	node := requireMCPExample(t)
	r := newMCPExampleRig(t)
	ctx := context.Background()
	// High impact, with the arguments approvers decide on, as the MCP
	// servers page declares them.
	if err := mcpservers.Classify(ctx, r.in.DB, r.admin, "shop", mcpshop.ToolIssueRefund, mcpservers.Class{Impact: mcpservers.ImpactHigh,
		AmountArg: "amount_minor", CurrencyArg: "currency", TargetArg: "order_id"}); err != nil {
		t.Fatal(err)
	}

	run := r.start(t, node, "Refund order ORD-1008: the laptop arrived with a cracked screen.")
	// Warden's progress notifications name the action waiting for
	// approval, and the example prints them.
	actionURL := regexp.MustCompile(`/approvals/(act_[A-Za-z0-9_-]+)`)
	var id string
	for id == "" {
		line, ok := <-run.lines
		if !ok {
			_ = run.cmd.Wait()
			t.Fatalf("the example ended before its refund waited for approval; stdout:\n%s\nstderr:\n%s", run.printed(), run.stderr.String())
		}
		if m := actionURL.FindStringSubmatch(line); m != nil {
			id = m[1]
		}
	}
	a := getAction(t, r.in, id)
	if a.Status != approvals.StatusPending || a.AmountMinor == nil || *a.AmountMinor != 124900 {
		t.Fatalf("waiting action = %s %s %v, want a pending refund of 124900", a.Status, a.Tool, a.AmountMinor)
	}

	approve := func(user string) {
		b := newBrowser(t, r.in.URL)
		b.loginDev(user)
		p := b.get("/approvals/" + id)
		p = b.post("/approvals/"+id+"/decide", b.withCSRF(decideForm(approvals.Approve, "checked with the customer", digestOnPage(t, p, "approve-form"))), nil)
		if p.Status != http.StatusOK {
			t.Fatalf("%s's approval = %d at %s", user, p.Status, p.URL)
		}
	}
	approve("alice")
	if n := r.shop.RefundCalls(); n != 0 {
		t.Fatalf("the shop was called after one of two approvals ($1,249.00 needs two)")
	}
	approve("bob")

	_, answer := run.wait(t)
	if !strings.HasPrefix(answer, "Refund outcome: ") || !strings.Contains(answer, `"refund_id":"rf_shop_1"`) || !strings.Contains(answer, `"amount_minor":124900`) {
		t.Errorf("the agent's answer = %q, want the shop's refund", answer)
	}
	if n := r.shop.RefundCalls(); n != 1 {
		t.Errorf("refund calls at the shop = %d, want exactly 1", n)
	}
	if rf := r.shop.Refunds(); len(rf) != 1 || rf[0].OrderID != "ORD-1008" || rf[0].AmountMinor != 124900 {
		t.Errorf("the shop's refunds = %+v, want one of 124900 for ORD-1008", rf)
	}
	if a := getAction(t, r.in, id); a.Status != approvals.StatusExecuted {
		t.Errorf("action = %s, want executed", a.Status)
	}
	if mine := r.modelCallsUnder(t); len(mine) != 3 {
		t.Errorf("model calls under the key = %d, want 3", len(mine))
	}
}
