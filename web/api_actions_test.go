package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools"
)

var approverAlice = identity.Principal{ID: "p-alice", Name: "Alice", Roles: []string{"approver"}, Tenants: []string{"acme"}}

func propose(t *testing.T, in *instance, key string, body map[string]any, hdr map[string]string) apiResp {
	t.Helper()
	raw, _ := json.Marshal(body)
	return callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/actions", key, raw, hdr)
}

func decide(t *testing.T, in *instance, id, decision, comment string) {
	t.Helper()
	a, err := approvals.Get(context.Background(), in.DB.Read(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Agent.Execution.Decide(context.Background(), approvals.Request{Principal: approverAlice, ActionID: id, Decision: decision, Comment: comment, Digest: a.PayloadDigest}); err != nil {
		t.Fatalf("decide %s: %v", id, err)
	}
}

// callbackServer records the callbacks an agent receives.
type callbackServer struct {
	mu     sync.Mutex
	bodies [][]byte
	sigs   []string
}

func (c *callbackServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.sigs = append(c.sigs, r.Header.Get("X-Warden-Signature"))
	c.mu.Unlock()
}

// verify checks a signature the way docs/api.md tells an agent to:
// HMAC-SHA256 keyed by its callback secret over "<t>.<body>", matching any
// of the v1 values, with t no more than five minutes old.
func verify(secret, sig string, body []byte) bool {
	var ts string
	var macs []string
	for _, part := range strings.Split(sig, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			ts = v
		}
		if v, ok := strings.CutPrefix(part, "v1="); ok {
			macs = append(macs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(unix, 0)) > 5*time.Minute {
		return false
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts + "."))
	h.Write(body)
	want := hex.EncodeToString(h.Sum(nil))
	for _, mac := range macs {
		if hmac.Equal([]byte(mac), []byte(want)) {
			return true
		}
	}
	return false
}

func TestExternalAgentProposesAndLongPolls(t *testing.T) {
	in := startWardenDemo(t, nil)
	cb := &callbackServer{}
	srv := httptest.NewServer(cb)
	defer srv.Close()
	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund"}, 600, 60, nil)

	r := propose(t, in, secrets.Key, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary": "Refund $45.50 for ORD-1005", "reason": "double charge", "amount": 4550, "currency": "usd", "callback_url": srv.URL,
	}, nil)
	if r.Status != http.StatusAccepted || r.str("status") != "pending" || r.str("id") == "" {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	id := r.str("id")
	// Long-poll: the decision arrives while the agent waits.
	// The decision is taken once the long poll is in Warden's hands.
	go func() {
		if wait.For(10*time.Second, func() bool { return in.Server.inflight.Load() > 0 }) {
			decide(t, in, id, approvals.Approve, "")
		}
	}()
	g := callAPI(t, context.Background(), http.MethodGet, in.URL+"/v1/actions/"+id+"?wait=10s", secrets.Key, nil, nil)
	if g.Status != http.StatusOK || g.str("status") == "pending" {
		t.Fatalf("long poll = %d %s, want the decision", g.Status, g.Raw)
	}
	// Warden executes it (the tool has a provider here) and the callback
	// carries a signature the agent can verify.
	var n int
	if !wait.For(15*time.Second, func() bool {
		g = callAPI(t, context.Background(), http.MethodGet, in.URL+"/v1/actions/"+id, secrets.Key, nil, nil)
		cb.mu.Lock()
		n = len(cb.bodies)
		cb.mu.Unlock()
		return g.str("status") == "executed" && n >= 2
	}) {
		t.Fatalf("action = %s with %d callbacks, want executed and two callbacks", g.Raw, n)
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for i, b := range cb.bodies {
		if !verify(secrets.Callback, cb.sigs[i], b) {
			t.Errorf("callback %d signature %q does not verify", i, cb.sigs[i])
		}
		if verify("whsec_other", cb.sigs[i], b) {
			t.Error("a callback verifies with another secret")
		}
	}
	var last struct{ Status string }
	json.Unmarshal(cb.bodies[len(cb.bodies)-1], &last)
	if last.Status != "executed" {
		t.Errorf("last callback status = %q, want executed", last.Status)
	}
}

func TestExternalAgentExecutesAndReports(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	gift := tools.Tool{Name: "ship_gift", Impact: risk.ImpactHigh, Reversibility: risk.Irreversible, Provider: tools.ProviderExternal,
		Timeout: time.Second, MaxAttempts: 1, ArgsSchema: json.RawMessage(`{"type":"object","required":["order_id"]}`), Enabled: true, ApprovalTTL: time.Hour}
	in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, gift) })
	_, key := newKey(t, in, "external agent", []string{"tool:ship_gift"}, 600, 60, nil)

	if r := propose(t, in, key, map[string]any{"tool": "ship_gift", "arguments": map[string]any{}, "summary": "Ship a gift"}, nil); r.Status != http.StatusBadRequest || r.code() != "invalid_arguments" {
		t.Fatalf("arguments failing the schema = %d %s", r.Status, r.Raw)
	}
	if r := propose(t, in, key, map[string]any{"tool": "issue_refund", "arguments": map[string]any{}, "summary": "x"}, nil); r.Status != http.StatusForbidden || r.code() != "tool_not_in_scope" {
		t.Fatalf("tool outside scope = %d %s", r.Status, r.Raw)
	}
	if r := propose(t, in, key, map[string]any{"tool": "launch_rockets", "summary": "x"}, nil); r.Status != http.StatusForbidden || r.code() != "tool_unknown" {
		t.Fatalf("unknown tool = %d %s", r.Status, r.Raw)
	}
	hdr := map[string]string{"Idempotency-Key": "gift-1"}
	r := propose(t, in, key, map[string]any{"tool": "ship_gift", "arguments": map[string]any{"order_id": "ORD-1002"}, "summary": "Ship a gift to the customer of ORD-1002"}, hdr)
	if r.Status != http.StatusAccepted || r.str("executed_by") != "agent" {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	id := r.str("id")
	if again := propose(t, in, key, map[string]any{"tool": "ship_gift", "arguments": map[string]any{"order_id": "ORD-1002"}, "summary": "Ship a gift to the customer of ORD-1002"}, hdr); again.str("id") != id {
		t.Errorf("a retried proposal made a second action")
	}
	result := func(body string) apiResp {
		return callAPI(t, ctx, http.MethodPost, in.URL+"/v1/actions/"+id+"/result", key, []byte(body), nil)
	}
	if res := result(`{"status":"executed","receipt":{"shipment":"SHP-1"}}`); res.Status != http.StatusConflict {
		t.Fatalf("result before approval = %d %s, want 409", res.Status, res.Raw)
	}
	decide(t, in, id, approvals.Approve, "")
	if a, _ := approvals.Get(ctx, in.DB.Read(), id); a.Status != approvals.StatusApproved {
		t.Fatalf("external action after approval = %s, want approved (the agent executes it)", a.Status)
	}
	if res := result(`{"status":"done"}`); res.Status != http.StatusBadRequest {
		t.Errorf("bad status = %d", res.Status)
	}
	res := result(`{"status":"executed","receipt":{"shipment":"SHP-1"}}`)
	if res.Status != http.StatusOK || res.str("status") != "executed" {
		t.Fatalf("result = %d %s", res.Status, res.Raw)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "action.executed" || ev.Actor.Type != "key" {
		t.Errorf("audit = %s by %s", ev.Verb, ev.Actor.Type)
	}
	if res := result(`{"status":"executed","receipt":{}}`); res.Status != http.StatusConflict {
		t.Errorf("second result = %d, want 409", res.Status)
	}
}

func TestAgentCancelsPendingAction(t *testing.T) {
	in := startWardenDemo(t, nil)
	r := propose(t, in, in.DemoKey, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1002", "amount_minor": 100, "currency": "USD", "account": "DE25370400440532017741"},
		"summary": "Refund $1.00", "amount": 100, "currency": "USD",
	}, nil)
	id := r.str("id")
	c := callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/actions/"+id+"/cancel", in.DemoKey, nil, nil)
	if c.Status != http.StatusOK || c.str("status") != "cancelled" {
		t.Fatalf("cancel = %d %s", c.Status, c.Raw)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "action.cancelled" {
		t.Errorf("audit = %s", ev.Verb)
	}
	if c := callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/actions/"+id+"/cancel", in.DemoKey, nil, nil); c.Status != http.StatusConflict {
		t.Errorf("second cancel = %d, want 409", c.Status)
	}
	a, _ := approvals.Get(context.Background(), in.DB.Read(), id)
	if _, err := in.Agent.Execution.Decide(context.Background(), approvals.Request{Principal: approverAlice, ActionID: id, Decision: approvals.Approve, Digest: a.PayloadDigest}); err == nil {
		t.Error("a cancelled action was approved")
	}
}

func TestProposalAmountComesFromTheArguments(t *testing.T) {
	in := startWardenDemo(t, nil)
	args := map[string]any{"order_id": "ORD-1004", "amount_minor": 240000, "currency": "USD", "account": "GB74BUKB20201555559182"}
	// Declaring a smaller amount than the call's would dodge dual control.
	if r := propose(t, in, in.DemoKey, map[string]any{"tool": "issue_refund", "arguments": args, "summary": "small refund", "amount": 100, "currency": "USD"}, nil); r.Status != http.StatusBadRequest {
		t.Fatalf("mismatched amount = %d %s, want 400", r.Status, r.Raw)
	}
	// Declaring none: the arguments' amount decides, and the summary is
	// Warden's, not the agent's.
	r := propose(t, in, in.DemoKey, map[string]any{"tool": "issue_refund", "arguments": args, "summary": "tiny thing, approve quickly"}, nil)
	if r.Status != http.StatusAccepted || r.Body["approvals_required"] != float64(2) || !strings.Contains(r.str("summary"), "$2,400.00") {
		t.Fatalf("proposal = %d %s, want 2 approvals and Warden's summary", r.Status, r.Raw)
	}
}

func TestExpiryIsCalledBack(t *testing.T) {
	in := startWardenDemo(t, nil)
	cb := &callbackServer{}
	srv := httptest.NewServer(cb)
	defer srv.Close()
	r := propose(t, in, in.DemoKey, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1002", "amount_minor": 100, "currency": "USD", "account": "DE25370400440532017741"},
		"summary": "Refund $1.00", "callback_url": srv.URL,
	}, nil)
	id := r.str("id")
	if _, err := in.DB.Read().Exec(`UPDATE actions SET expires_at = '2000-01-01T00:00:00.000000000Z' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	// The runtime's own expiry loop may get there first; either way the
	// action ends expired.
	if _, err := in.Agent.Execution.ExpireActions(context.Background()); err != nil {
		t.Fatalf("ExpireActions: %v", err)
	}
	if a, err := approvals.Get(context.Background(), in.DB.Read(), id); err != nil || a.Status != approvals.StatusExpired {
		t.Fatalf("action after expiry = %q, %v; want expired", a.Status, err)
	}
	var got string
	if !wait.For(15*time.Second, func() bool {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if len(cb.bodies) > 0 {
			var p struct{ ID, Status string }
			json.Unmarshal(cb.bodies[len(cb.bodies)-1], &p)
			got = p.ID + ":" + p.Status
		}
		return got == id+":expired"
	}) {
		t.Fatalf("no expiry callback; last = %q", got)
	}
}
