package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
)

type payRefundIn struct {
	OrderID     string `json:"order_id"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// payUpstream is a real MCP server (Go SDK) with one money tool,
// issue_refund, that counts the refunds it paid.
type payUpstream struct {
	url  string
	paid atomic.Int64
}

func newPayUpstream(t *testing.T) *payUpstream {
	t.Helper()
	u := &payUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "pay", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "issue_refund", Description: "Refund part or all of an order."},
		func(ctx context.Context, req *mcp.CallToolRequest, in payRefundIn) (*mcp.CallToolResult, any, error) {
			if in.AmountMinor > 500000 {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refund exceeds the order total"}}}, nil, nil
			}
			n := u.paid.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refund " + in.OrderID + " paid, receipt R" + string(rune('0'+n))}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

// mcpPaySetup registers the pay upstream in in, discovers it and
// classifies issue_refund high-impact with its money arguments; it
// returns a key scoped to the server's tools.
func mcpPaySetup(t *testing.T, in *instance, up *payUpstream) string {
	t.Helper()
	ctx := context.Background()
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
	if _, err := mcpservers.Create(ctx, in.DB, in.Agent.Journeys.Sealer(), admin, mcpservers.Server{Name: "pay", URL: up.url, Timeout: 5 * time.Second, Enabled: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Agent.MCP.Discover(ctx, admin, "pay"); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, in.DB, admin, "pay", "issue_refund", mcpservers.Class{Impact: mcpservers.ImpactHigh,
		AmountArg: "amount_minor", CurrencyArg: "currency", TargetArg: "order_id"}); err != nil {
		t.Fatal(err)
	}
	_, key := newKeyIn(t, in, "acme", "refund-bot", []string{"mcp:pay/*"}, "test")
	return key
}

// progressSession is mcpSession whose progress notifications are kept.
func progressSession(t *testing.T, in *instance, key string, got *[]string, mu *sync.Mutex) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			*got = append(*got, req.Params.Message)
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: in.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// pendingMCPAction waits for the pending action of tool on order and
// returns it.
func pendingMCPAction(t *testing.T, in *instance, tool, order string) approvals.Action {
	t.Helper()
	var id string
	waitUntil(t, "a pending action of "+tool, func() bool {
		return in.DB.Read().QueryRow(`SELECT id FROM actions WHERE tool = ? AND status = 'pending' AND target_label = ?`, tool, order).Scan(&id) == nil
	})
	return getAction(t, in, id)
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool in the background; the call ends with ctx or,
// at the latest, when the test ends.
func callAsync(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, progress bool) chan callOutcome {
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	out := make(chan callOutcome, 1)
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progress {
		p.SetProgressToken("refund-1")
	}
	go func() {
		res, err := cs.CallTool(ctx, p)
		out <- callOutcome{res, err}
	}()
	return out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func receive(t *testing.T, ch chan callOutcome) *mcp.CallToolResult {
	t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("tools/call: %v", o.err)
		}
		return o.res
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to the waiting tools/call in 20 s")
	}
	return nil
}

// A high-impact MCP call waits for people: the client's request stays
// open and is told where the action waits; alice and bob approve a
// $2,500 refund in the console (dual control) and the client receives
// the upstream's answer, paid once; a rejection reaches the client as a
// tool error naming who rejected it and why; a client that goes away
// leaves the action pending and its retry attaches to the same action.
func TestMCPApprovalWait(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	up := newPayUpstream(t)
	key := mcpPaySetup(t, in, up)
	alice, bob := newBrowser(t, in.URL), newBrowser(t, in.URL)
	alice.loginDev("alice")
	bob.loginDev("bob")

	t.Run("approved by two people, the client gets the answer", func(t *testing.T) {
		var mu sync.Mutex
		var progress []string
		cs := progressSession(t, in, key, &progress, &mu)
		done := callAsync(t, context.Background(), cs, "pay__issue_refund", map[string]any{"order_id": "ORD-77", "amount_minor": 250000, "currency": "USD"}, true)
		a := pendingMCPAction(t, in, "pay__issue_refund", "ORD-77")
		if a.ApprovalsRequired != 2 || a.AmountMinor == nil || *a.AmountMinor != 250000 || a.TargetLabel != "ORD-77" {
			t.Errorf("action = %d approvals, amount %v, target %q; want 2 approvals for 250000 on ORD-77", a.ApprovalsRequired, a.AmountMinor, a.TargetLabel)
		}
		waitUntil(t, "a progress notification", func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) > 0 })
		mu.Lock()
		first := progress[0]
		mu.Unlock()
		if !strings.Contains(first, in.URL+"/approvals/"+a.ID) || !strings.Contains(first, "0 of 2") {
			t.Errorf("progress message %q: want the action's URL and 0 of 2 approvals", first)
		}
		if p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status >= 400 {
			t.Fatalf("alice approves: %d %.600s", p.Status, p.Doc.Find("main").Text())
		}
		if up.paid.Load() != 0 {
			t.Fatal("paid after one of two approvals")
		}
		if p := bob.post("/approvals/"+a.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status >= 400 {
			t.Fatalf("bob approves: %d %s", p.Status, p.Body)
		}
		res := receive(t, done)
		if res.IsError || resultText(res) != "refund ORD-77 paid, receipt R1" || up.paid.Load() != 1 {
			t.Errorf("the client got %q (error %v), %d refunds paid; want the upstream's receipt, paid once", resultText(res), res.IsError, up.paid.Load())
		}
		if got := getAction(t, in, a.ID); got.Status != approvals.StatusExecuted {
			t.Errorf("action status %s, want executed", got.Status)
		}
		// The same call again soon after is the same call: its answer, not a second refund.
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pay__issue_refund", Arguments: map[string]any{"order_id": "ORD-77", "amount_minor": 250000, "currency": "USD"}})
		if err != nil || resultText(res) != "refund ORD-77 paid, receipt R1" || up.paid.Load() != 1 {
			t.Errorf("the same call again: %q, %v, %d paid; want the first answer, paid once", resultText(res), err, up.paid.Load())
		}
	})

	t.Run("a rejection is a tool error saying who and why", func(t *testing.T) {
		cs := mcpSession(t, in, key)
		done := callAsync(t, context.Background(), cs, "pay__issue_refund", map[string]any{"order_id": "ORD-78", "amount_minor": 1500, "currency": "USD"}, false)
		a := pendingMCPAction(t, in, "pay__issue_refund", "ORD-78")
		if p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Reject, "customer already refunded by card", a.PayloadDigest)), nil); p.Status >= 400 {
			t.Fatalf("alice rejects: %d %s", p.Status, p.Body)
		}
		res := receive(t, done)
		if text := resultText(res); !res.IsError || !strings.Contains(text, "Alice Approver rejected it: customer already refunded by card") || up.paid.Load() != 1 {
			t.Errorf("rejected call: %q (error %v), %d paid", text, res.IsError, up.paid.Load())
		}
	})

	t.Run("a client that left reattaches to its pending action", func(t *testing.T) {
		args := map[string]any{"order_id": "ORD-79", "amount_minor": 900, "currency": "USD"}
		// The first call is a bare Streamable HTTP POST whose connection
		// the client drops (a timeout, a crash of the agent).
		ctx, cancel := context.WithCancel(context.Background())
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay__issue_refund","arguments":` + mustJSON(t, args) + `}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, in.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("Authorization", "Bearer "+key)
		first := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			first <- err
		}()
		a := pendingMCPAction(t, in, "pay__issue_refund", "ORD-79")
		cancel()
		if err := <-first; err == nil {
			t.Fatal("the abandoned call answered")
		}
		waitUntil(t, "the abandoned call's audit event", func() bool {
			return countRows(t, in.DB, `SELECT COUNT(*) FROM audit_events WHERE verb = 'mcp.call' AND details LIKE ?`, `%"outcome":"waiting"%`) == 1
		})
		if got := getAction(t, in, a.ID); got.Status != approvals.StatusPending {
			t.Fatalf("after the client left the action is %s, want pending", got.Status)
		}
		var mu sync.Mutex
		var progress []string
		retry := callAsync(t, context.Background(), progressSession(t, in, key, &progress, &mu), "pay__issue_refund", args, true)
		// Its first progress message says the retry waits on an action.
		waitUntil(t, "the retry waiting", func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) > 0 })
		mu.Lock()
		if !strings.Contains(progress[0], a.ID) {
			t.Errorf("the retry waits on %q, want %s", progress[0], a.ID)
		}
		mu.Unlock()
		if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE tool = 'pay__issue_refund' AND status = 'pending'`); n != 1 {
			t.Fatalf("%d pending actions after the retry, want the one it reattached to", n)
		}
		if p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status >= 400 {
			t.Fatalf("alice approves: %d %.600s", p.Status, p.Doc.Find("main").Text())
		}
		res := receive(t, retry)
		if res.IsError || !strings.HasPrefix(resultText(res), "refund ORD-79 paid") || up.paid.Load() != 2 {
			t.Errorf("the retry got %q (error %v), %d paid", resultText(res), res.IsError, up.paid.Load())
		}
		var reattached int
		if err := in.DB.Read().QueryRow(`SELECT COUNT(*) FROM audit_events WHERE verb = 'mcp.call' AND details LIKE ? AND details LIKE ?`,
			`%"reattached":true%`, `%`+a.ID+`%`).Scan(&reattached); err != nil || reattached != 1 {
			t.Errorf("audit events of the reattached call: %d (%v), want 1", reattached, err)
		}
	})

	t.Run("a tool switched off is refused and asks nobody", func(t *testing.T) {
		admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
		if _, err := mcpservers.SetToolEnabled(context.Background(), in.DB, admin, "pay", "issue_refund", false, "INC-7"); err != nil {
			t.Fatal(err)
		}
		before := countRows(t, in.DB, `SELECT COUNT(*) FROM actions`)
		res, err := mcpSession(t, in, key).CallTool(context.Background(), &mcp.CallToolParams{Name: "pay__issue_refund",
			Arguments: map[string]any{"order_id": "ORD-81", "amount_minor": 100, "currency": "USD"}})
		if err != nil || !res.IsError || !strings.Contains(resultText(res), "pay__issue_refund is switched off") {
			t.Errorf("a call to a tool switched off: %v, %q", err, resultText(res))
		}
		if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions`); n != before {
			t.Errorf("%d actions proposed for a tool switched off", n-before)
		}
		if _, err := mcpservers.SetToolEnabled(context.Background(), in.DB, admin, "pay", "issue_refund", true, ""); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("every call is a trace of its server and tool", func(t *testing.T) {
		rows, err := storeStrings(in, `SELECT j.status || ' ' || s.tool || ' ' || s.status FROM journeys j JOIN journey_steps s ON s.journey_id = j.id
			WHERE j.skill = 'mcp:pay' ORDER BY j.created_at, j.id`)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"completed pay__issue_refund ok", "completed pay__issue_refund ok", "rejected pay__issue_refund rejected",
			"awaiting_approval pay__issue_refund awaiting_approval", "completed pay__issue_refund ok", "failed pay__issue_refund refused"}
		if strings.Join(rows, "|") != strings.Join(want, "|") {
			t.Errorf("traces of the MCP calls = %q\nwant %q", rows, want)
		}
		carol := newBrowser(t, in.URL)
		carol.loginDev("carol")
		p := carol.get("/traces?skill=mcp:pay")
		if p.Status != http.StatusOK || strings.Count(p.Body, "mcp:pay") < 6 {
			t.Errorf("on-call's Traces filtered to mcp:pay: %d, %d mentions", p.Status, strings.Count(p.Body, "mcp:pay"))
		}
		var id string
		if err := in.DB.Read().QueryRow(`SELECT id FROM journeys WHERE skill = 'mcp:pay' AND status = 'rejected'`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if p := carol.get("/traces/" + id); p.Status != http.StatusOK || !strings.Contains(p.Body, "pay__issue_refund") || !strings.Contains(p.Body, "ORD-78") {
			t.Errorf("the trace of the rejected call: %d, want its tool and arguments", p.Status)
		}
	})

	t.Run("an upstream's refusal fails the action and reaches the client", func(t *testing.T) {
		done := callAsync(t, context.Background(), mcpSession(t, in, key), "pay__issue_refund", map[string]any{"order_id": "ORD-80", "amount_minor": 600000, "currency": "USD"}, false)
		a := pendingMCPAction(t, in, "pay__issue_refund", "ORD-80")
		alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil)
		bob.post("/approvals/"+a.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil)
		res := receive(t, done)
		if !res.IsError || resultText(res) != "refund exceeds the order total" {
			t.Errorf("refused by the upstream: %q (error %v); want its tool error", resultText(res), res.IsError)
		}
		if got := getAction(t, in, a.ID); got.Status != approvals.StatusFailed || !strings.Contains(got.Failure, "refund exceeds the order total") {
			t.Errorf("action %s (%q), want failed saying why", got.Status, got.Failure)
		}
	})
}

// An approved MCP call is sent at most once: approved while no worker
// runs (a crash between the approval and the call), it is sent once when
// the work resumes, however often the execution runs; an attempt whose
// outcome was lost is never sent again but needs review.
func TestMCPApprovedCallAtMostOnce(t *testing.T) {
	in := startWarden(t, nil) // no background work: nothing runs the approved call yet
	ctx := context.Background()
	if _, err := models.AllowHosts(ctx, in.DB, audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	up := newPayUpstream(t)
	key := mcpPaySetup(t, in, up)
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")

	propose := func(order string) approvals.Action {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := callAsync(t, ctx, mcpSession(t, in, key), "pay__issue_refund", map[string]any{"order_id": order, "amount_minor": 700, "currency": "USD"}, false)
		var id string
		waitUntil(t, "the action of "+order, func() bool {
			return in.DB.Read().QueryRow(`SELECT id FROM actions WHERE tool = 'pay__issue_refund' AND status = 'pending' AND target_label = ?`, order).Scan(&id) == nil
		})
		cancel()
		<-done
		a := getAction(t, in, id)
		if p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status >= 400 {
			t.Fatalf("alice approves: %d %.600s", p.Status, p.Doc.Find("main").Text())
		}
		return a
	}

	a := propose("ORD-90")
	if up.paid.Load() != 0 {
		t.Fatal("the upstream was called before the execution ran")
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = in.Agent.Execution.ExecuteAction(ctx, a.ID) }()
	}
	wg.Wait()
	_ = in.Agent.Execution.ExecuteAction(ctx, a.ID)
	if up.paid.Load() != 1 {
		t.Errorf("%d refunds paid after the execution ran four times, want 1", up.paid.Load())
	}
	if got := getAction(t, in, a.ID); got.Status != approvals.StatusExecuted {
		t.Errorf("action %s, want executed", got.Status)
	}

	// An attempt was sent and Warden died before it learnt the outcome:
	// the record is RESERVED with one attempt. Running the execution again
	// must not send the call: it needs review.
	b := propose("ORD-91")
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET status = 'executing' WHERE id = ?`, b.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE effects SET state = 'reserved', attempts = 1 WHERE action_id = ?`, b.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := in.Agent.Execution.ExecuteAction(ctx, b.ID); err != nil || up.paid.Load() != 1 {
		t.Errorf("execution after a lost outcome: %v, %d paid; want the action failed for review and no second call", err, up.paid.Load())
	}
	if got := getAction(t, in, b.ID); got.Status != approvals.StatusFailed || !strings.Contains(got.Failure, "outcome unknown") {
		t.Errorf("action %s (%q), want failed: outcome unknown", got.Status, got.Failure)
	}
	e, gerr := ledger.Get(ctx, in.DB.Read(), b.IdempotencyKey)
	if gerr != nil || !e.NeedsReview || e.State != ledger.Reserved {
		t.Errorf("ledger record %+v (%v): want reserved, needs review", e, gerr)
	}
	// The same lost outcome, and then on-call switches the server off
	// before the execution runs again: still failed for review, not
	// left executing for a reconciler that cannot ask.
	c := propose("ORD-92")
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET status = 'executing' WHERE id = ?`, c.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE effects SET state = 'reserved', attempts = 1 WHERE action_id = ?`, c.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.SetEnabled(ctx, in.DB, audit.Actor{Type: audit.ActorPrincipal, ID: "oncall"}, "pay", false); err != nil {
		t.Fatal(err)
	}
	if err := in.Agent.Execution.ExecuteAction(ctx, c.ID); err != nil || up.paid.Load() != 1 {
		t.Errorf("execution after a lost outcome and a switch-off: %v, %d paid", err, up.paid.Load())
	}
	if got := getAction(t, in, c.ID); got.Status != approvals.StatusFailed || !strings.Contains(got.Failure, "outcome unknown") {
		t.Errorf("action %s (%q), want failed: outcome unknown", got.Status, got.Failure)
	}
	if e, err := ledger.Get(ctx, in.DB.Read(), c.IdempotencyKey); err != nil || !e.NeedsReview {
		t.Errorf("ledger record %+v (%v): want needs review", e, err)
	}
	if p := alice.get("/approvals/" + b.ID); !strings.Contains(p.Body, "needs review") || !strings.Contains(p.Body, "never sent again") {
		t.Errorf("the action page does not say the call needs review")
	}
}

// Calls waiting for their approvers hold none of the agent API's
// in-flight slots: with a limit of one, two calls wait and other agents
// are still answered.
func TestMCPWaitingCallsHoldNoAPISlot(t *testing.T) {
	in := startWardenDemo(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "1"})
	in.waitReady(t)
	key := mcpPaySetup(t, in, newPayUpstream(t))
	for _, order := range []string{"ORD-61", "ORD-62"} {
		callAsync(t, context.Background(), mcpSession(t, in, key), "pay__issue_refund", map[string]any{"order_id": order, "amount_minor": 100, "currency": "USD"}, false)
		pendingMCPAction(t, in, "pay__issue_refund", order)
	}
	res, err := mcpSession(t, in, key).CallTool(context.Background(), &mcp.CallToolParams{Name: "pay__issue_refund", Arguments: map[string]any{"order_id": "ORD-63"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "input schema") {
		t.Errorf("another call while two wait: %v, %q; want it answered (a schema refusal), not shed", err, resultText(res))
	}
}

// A low-impact MCP call's unit cost is reserved before the call and
// charged once the upstream answered; nothing stays reserved.
func TestMCPLowImpactCallChargesItsUnitCost(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	up := newPayUpstream(t)
	key := mcpPaySetup(t, in, up)
	ctx := context.Background()
	if err := mcpservers.Classify(ctx, in.DB, audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}, "pay", "issue_refund",
		mcpservers.Class{Impact: mcpservers.ImpactLow, UnitCostMicros: 25000}); err != nil {
		t.Fatal(err)
	}
	tenant, err := adminLookupTenant(in, "acme")
	if err != nil {
		t.Fatal(err)
	}
	before, err := budgets.Get(ctx, in.DB.Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcpSession(t, in, key).CallTool(ctx, &mcp.CallToolParams{Name: "pay__issue_refund", Arguments: map[string]any{"order_id": "ORD-5", "amount_minor": 100, "currency": "USD"}})
	if err != nil || res.IsError || up.paid.Load() != 1 {
		t.Fatalf("low-impact call: %v, %q", err, resultText(res))
	}
	after, err := budgets.Get(ctx, in.DB.Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.SpentMicros-before.SpentMicros != 25000 || after.ReservedMicros != before.ReservedMicros {
		t.Errorf("budget spent +%d, reserved %d → %d; want +25000 spent and nothing left reserved",
			after.SpentMicros-before.SpentMicros, before.ReservedMicros, after.ReservedMicros)
	}
	var cost int64
	if err := in.DB.Read().QueryRow(`SELECT cost_micros FROM journeys WHERE skill = 'mcp:pay'`).Scan(&cost); err != nil || cost != 25000 {
		t.Errorf("the call's trace costs %d (%v), want 25000", cost, err)
	}
}

// Identical high-impact calls sent at once (an agent retrying eagerly,
// several replicas) ask the approvers once: one action, every call
// attached to it. On PostgreSQL the proposals take turns on the call key.
func TestMCPConcurrentIdenticalCallsOneAction(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	key := mcpPaySetup(t, in, newPayUpstream(t))
	args := map[string]any{"order_id": "ORD-70", "amount_minor": 300, "currency": "USD"}
	var mu sync.Mutex
	waiting := make([][]string, 6)
	for i := range 6 {
		callAsync(t, context.Background(), progressSession(t, in, key, &waiting[i], &mu), "pay__issue_refund", args, true)
	}
	// Each call's first progress message comes once it has proposed or
	// attached: then no proposal can come late.
	waitUntil(t, "six calls waiting", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range waiting {
			if len(w) == 0 {
				return false
			}
		}
		return true
	})
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE tool = 'pay__issue_refund'`); n != 1 {
		t.Errorf("%d actions for six identical calls, want 1", n)
	}
}
