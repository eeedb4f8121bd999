package web

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

type apiResp struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

func (r apiResp) code() string {
	if e, ok := r.Body["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	return ""
}

func (r apiResp) str(k string) string { s, _ := r.Body[k].(string); return s }

func callAPI(t testing.TB, ctx context.Context, method, url, key string, body []byte, hdr map[string]string) apiResp {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := apiResp{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

func journey(t testing.TB, in *instance, key, input string, hdr map[string]string) apiResp {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"input": input})
	return callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/journeys", key, body, hdr)
}

func countRows(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// newKey creates a key for acme with the given scopes and limits.
func newKey(t *testing.T, in *instance, name string, scopes []string, perMin, burst int, expires *time.Time) (keys.Key, string) {
	t.Helper()
	k, secrets := newKeyWithSecrets(t, in, name, scopes, perMin, burst, expires)
	return k, secrets.Key
}

// newKeyWithSecrets is newKey returning the callback secret too.
func newKeyWithSecrets(t *testing.T, in *instance, name string, scopes []string, perMin, burst int, expires *time.Time) (keys.Key, keys.Secrets) {
	t.Helper()
	ctx := context.Background()
	tenant, err := tenants.BySlug(ctx, in.DB.Read(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var k keys.Key
	var secrets keys.Secrets
	err = in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		k, secrets, err = keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: tenant.ID, Name: name, Scopes: scopes, RatePerMin: perMin, Burst: burst, CreatedBy: "test"})
		if err != nil {
			return err
		}
		if expires != nil {
			_, err = tx.Exec(`UPDATE virtual_keys SET expires_at = ? WHERE id = ?`, store.FormatTime(*expires), k.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return k, secrets
}

func TestJourneyCompletesAndIsReadable(t *testing.T) {
	in := startWardenDemo(t, nil)
	r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", map[string]string{"X-Correlation-Id": "corr-42"})
	if r.Status != http.StatusOK || r.str("status") != "completed" || r.str("skill") != "order_status" {
		t.Fatalf("POST /v1/journeys = %d %s", r.Status, r.Raw)
	}
	if r.str("release") == "" || r.str("output") == "" || r.Body["cost"] == nil {
		t.Errorf("response lacks release, output or cost: %s", r.Raw)
	}
	id := r.str("id")
	g := callAPI(t, context.Background(), http.MethodGet, in.URL+"/v1/journeys/"+id, in.DemoKey, nil, nil)
	if g.Status != http.StatusOK || g.str("id") != id || g.str("correlation_id") != "corr-42" {
		t.Fatalf("GET journey = %d %s", g.Status, g.Raw)
	}
	steps, _ := g.Body["steps"].([]any)
	if len(steps) < 2 {
		t.Fatalf("GET journey has %d steps, want route + lookup: %s", len(steps), g.Raw)
	}
	// Another tenant's key cannot read it.
	ctx := context.Background()
	var other tenants.Tenant
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		other, err = tenants.Insert(ctx, tx, "globex", "Globex")
		return err
	})
	var otherSecret string
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, secrets, err := keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: other.ID, Name: "g", Scopes: []string{"skill:order_status"}, RatePerMin: 60, Burst: 5, CreatedBy: "test"})
		otherSecret = secrets.Key
		return err
	})
	if g := callAPI(t, ctx, http.MethodGet, in.URL+"/v1/journeys/"+id, otherSecret, nil, nil); g.Status != http.StatusNotFound {
		t.Errorf("other tenant's key reads the journey: %d", g.Status)
	}
}

func TestHighImpactStopsForApproval(t *testing.T) {
	in := startWardenDemo(t, nil)
	before, err := in.Agent.Sim.EffectCount(context.Background(), sim.ToolIssueRefund)
	if err != nil {
		t.Fatal(err)
	}
	r := journey(t, in, in.DemoKey, "Refund order ORD-1004 in full, the customer returned everything", nil)
	if r.Status != http.StatusAccepted || r.str("status") != "awaiting_approval" {
		t.Fatalf("refund journey = %d %s", r.Status, r.Raw)
	}
	action, _ := r.Body["action"].(map[string]any)
	if action == nil || action["status"] != "pending" || !strings.Contains(action["summary"].(string), "$2,400.00") || !strings.Contains(action["summary"].(string), "9182") {
		t.Fatalf("action = %v, want pending with the amount and account", action)
	}
	if strings.Contains(action["summary"].(string), "GB74BUKB") {
		t.Error("summary shows the whole account number")
	}
	after, _ := in.Agent.Sim.EffectCount(context.Background(), sim.ToolIssueRefund)
	if after != before {
		t.Fatalf("the provider refunded before approval: effects %d → %d", before, after)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM actions WHERE id = ? AND status = 'pending' AND approvals_required = 2`, action["id"]); n != 1 {
		t.Errorf("action not stored pending with dual control (2 approvals for $2,400)")
	}
}

func TestKeyRefusals(t *testing.T) {
	in := startWardenDemo(t, nil)
	past := time.Now().Add(-time.Hour)
	_, expired := newKey(t, in, "expired", []string{"skill:order_status", "tool:lookup_order"}, 600, 60, &past)
	revokedKey, revoked := newKey(t, in, "revoked", []string{"skill:order_status", "tool:lookup_order"}, 600, 60, nil)
	in.DB.Transact(context.Background(), func(tx *store.Tx) error { _, err := keys.Revoke(context.Background(), tx, revokedKey.ID); return err })
	wrongSecret := in.DemoKey[:len(in.DemoKey)-4] + "zzzz"

	tests := []struct {
		name, key, verb string
	}{
		{"no key", "", ""},
		{"malformed", "hello", ""},
		{"unknown prefix", "wk_aaaaaaaa_" + strings.Repeat("b", 32), ""},
		{"wrong secret, valid prefix", wrongSecret, "key.wrong_secret"},
		{"revoked", revoked, "key.revoked"},
		{"expired", expired, "key.expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			beforeJ := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
			beforeA := auditCount(t, in.DB)
			r := journey(t, in, tt.key, "Where is my order ORD-1003?", nil)
			if r.Status != http.StatusUnauthorized || r.code() != "unauthorized" {
				t.Fatalf("= %d %s, want 401 unauthorized", r.Status, r.Raw)
			}
			if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`); n != beforeJ {
				t.Errorf("a refused key started a journey")
			}
			if tt.verb != "" {
				if ev := lastAudit(t, in.DB); ev.Verb != tt.verb || auditCount(t, in.DB) != beforeA+1 {
					t.Errorf("audit = %s, want %s", ev.Verb, tt.verb)
				}
			} else if auditCount(t, in.DB) != beforeA {
				t.Errorf("noise was audited")
			}
		})
	}
}

func TestPolicyRefusals(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	_, noWindow := newKey(t, in, "no change window", []string{"skill:order_support", "tool:lookup_order", "tool:submit_change_request"}, 600, 60, nil)
	_, noSkill := newKey(t, in, "lookup only", []string{"tool:lookup_order"}, 600, 60, nil)

	check := func(name, key, input string, wantStatus int, wantCode string) {
		t.Helper()
		before := auditCount(t, in.DB)
		r := journey(t, in, key, input, nil)
		if r.Status != wantStatus || r.code() != wantCode {
			t.Fatalf("%s: = %d %s, want %d %s", name, r.Status, r.Raw, wantStatus, wantCode)
		}
		if r.str("status") != "failed" || r.str("id") == "" {
			t.Errorf("%s: journey not reported failed: %s", name, r.Raw)
		}
		ev := lastAudit(t, in.DB)
		if auditCount(t, in.DB) != before+1 || ev.Verb != "policy.violation" || ev.Details["code"] != wantCode {
			t.Errorf("%s: audit = %s %v, want policy.violation %s", name, ev.Verb, ev.Details, wantCode)
		}
	}
	check("tool outside scope", noWindow, "Please change the delivery address for ORD-1001 to 22 Quay Street", http.StatusForbidden, "tool_not_in_scope")
	check("skill outside scope", noSkill, "Where is my order ORD-1003?", http.StatusForbidden, "skill_not_in_scope")

	// The kill switch.
	in.DB.Transact(ctx, func(tx *store.Tx) error { _, err := catalog.SetEnabled(ctx, tx, "lookup_order", false); return err })
	check("switched off", in.DemoKey, "Where is my order ORD-1003?", http.StatusForbidden, "tool_disabled")
	in.DB.Transact(ctx, func(tx *store.Tx) error { _, err := catalog.SetEnabled(ctx, tx, "lookup_order", true); return err })

	// A stricter schema the planner's arguments do not meet.
	tool, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order")
	tool.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","maxLength":3}}}`)
	in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, tool) })
	check("arguments fail the schema", in.DemoKey, "Where is my order ORD-1003?", http.StatusBadRequest, "invalid_arguments")

	// A tool the catalog does not know.
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`DELETE FROM tools WHERE name = 'lookup_order'`)
		return err
	})
	check("unknown tool", in.DemoKey, "Where is my order ORD-1003?", http.StatusForbidden, "tool_unknown")
}

func TestSkillOutsideScope(t *testing.T) {
	in := startWardenDemo(t, nil)
	_, key := newKey(t, in, "status only", []string{"skill:order_status", "tool:lookup_order"}, 600, 60, nil)
	r := journey(t, in, key, "Refund order ORD-1004 in full please", nil)
	if r.Status != http.StatusForbidden || r.code() != "skill_not_in_scope" {
		t.Fatalf("= %d %s, want 403 skill_not_in_scope", r.Status, r.Raw)
	}
}

func TestRequestRefusals(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	url := in.URL + "/v1/journeys"
	if r := callAPI(t, ctx, http.MethodPost, url, in.DemoKey, []byte(`{"input":`), nil); r.Status != 400 || r.code() != "invalid_json" {
		t.Errorf("malformed JSON = %d %s", r.Status, r.Raw)
	}
	if r := callAPI(t, ctx, http.MethodPost, url, in.DemoKey, []byte(`{"input":"hi","bogus":1}`), nil); r.Status != 400 {
		t.Errorf("unknown field = %d %s", r.Status, r.Raw)
	}
	if r := callAPI(t, ctx, http.MethodPost, url, in.DemoKey, []byte(`{"input":""}`), nil); r.Status != 400 {
		t.Errorf("empty input = %d %s", r.Status, r.Raw)
	}
	// A member of the wrong type is named with the rule it breaks, on
	// every door, in the sender's terms (not Go's types and fields).
	for _, tc := range []struct{ path, body, says string }{
		{"/v1/journeys", `{"input":5}`, `\"input\" must be a string`},
		{"/v1/actions", `{"tool":5}`, `\"tool\" must be a string`},
		{"/v1/chat/completions", `{"model":"demo-model","messages":[{"role":"user","content":"hi"}],"max_tokens":"12"}`, `\"max_tokens\" must be a whole number`},
		{"/v1/chat/completions", `{"model":"demo-model","messages":[{"role":"user","content":"hi"}],"stream":"yes"}`, `\"stream\" must be true or false`},
		{"/v1/responses", `{"model":"demo-model","input":"hi","max_output_tokens":1e30}`, `\"max_output_tokens\" must be a whole number`},
	} {
		r := callAPI(t, ctx, http.MethodPost, in.URL+tc.path, in.DemoKey, []byte(tc.body), nil)
		if r.Status != 400 || !strings.Contains(string(r.Raw), tc.says) || strings.Contains(string(r.Raw), "Go struct") {
			t.Errorf("POST %s %s = %d %s; want 400 saying %s", tc.path, tc.body, r.Status, r.Raw, tc.says)
		}
	}
	big := append([]byte(`{"input":"`), bytes.Repeat([]byte("a"), 1<<20+10)...)
	big = append(big, `"}`...)
	if r := callAPI(t, ctx, http.MethodPost, url, in.DemoKey, big, nil); r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.Raw), `"error"`) {
		t.Errorf("1 MiB body = %d %s", r.Status, r.Raw[:min(200, len(r.Raw))])
	}
	if r := journey(t, in, in.DemoKey, "what's the weather like in Paris today", nil); r.Status != http.StatusUnprocessableEntity || r.code() != "no_route" {
		t.Errorf("no route = %d %s", r.Status, r.Raw)
	}
}

func TestFrozenTenantAndRateLimit(t *testing.T) {
	in := startWardenDemo(t, nil)
	_, slow := newKey(t, in, "slow", []string{"skill:order_status", "tool:lookup_order"}, 1, 1, nil)
	if r := journey(t, in, slow, "Where is my order ORD-1003?", nil); r.Status != http.StatusOK {
		t.Fatalf("first call = %d %s", r.Status, r.Raw)
	}
	r := journey(t, in, slow, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusTooManyRequests || r.code() != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("second call = %d %s (Retry-After %q), want 429 with Retry-After", r.Status, r.Raw, r.Header.Get("Retry-After"))
	}

	in.DB.Transact(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(`UPDATE tenants SET frozen = 1 WHERE slug = 'acme'`)
		return err
	})
	before := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.Status != http.StatusForbidden || r.code() != "tenant_frozen" {
		t.Fatalf("frozen tenant = %d %s", r.Status, r.Raw)
	}
	if countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`) != before {
		t.Error("a frozen tenant's journey ran")
	}
}

func TestBudgetExhaustedAndFailClosed(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	tenant, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Total, LimitMicros: 10, AlertPercent: 80}, time.Now())
	})
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); r.Status != http.StatusPaymentRequired || r.code() != "budget_exhausted" {
		t.Fatalf("tiny budget = %d %s", r.Status, r.Raw)
	}

	// The budget store fails on write: nothing is admitted (fail closed).
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Total, LimitMicros: 1 << 50, AlertPercent: 80}, time.Now()); err != nil {
			return err
		}
		trigger := `CREATE TRIGGER budgets_broken BEFORE UPDATE ON budgets BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`
		if in.DB.Dialect() == store.Postgres {
			trigger = `CREATE TRIGGER budgets_broken BEFORE UPDATE ON budgets FOR EACH ROW EXECUTE FUNCTION warden_refuse('disk on fire')`
		}
		_, err := tx.Exec(trigger)
		return err
	})
	before := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
	r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusServiceUnavailable || r.code() != "unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("broken budget store = %d %s, want 503 with Retry-After", r.Status, r.Raw)
	}
	if countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`) != before {
		t.Error("a journey was admitted although its reservation could not be written")
	}
}

func TestConcurrentJourneysNeverOverspend(t *testing.T) {
	t.Parallel()
	// The race is about the budget: admit all 200 at once, no shedding.
	in := startWardenDemo(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "1000"})
	ctx := context.Background()
	const input = "Where is my order ORD-1003?"
	est, err := in.Agent.Journeys.Estimate(ctx, input)
	if err != nil {
		t.Fatal(err)
	}
	tenant, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(`UPDATE budgets SET spent_micros = 0, reserved_micros = 0`); err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Total, LimitMicros: 50 * est, AlertPercent: 80}, time.Now())
	})
	// Every admitted journey holds its reservation for a while (the tool's
	// timeout is raised to allow it), so all 200 are in flight together.
	lookup, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order")
	lookup.Timeout = 15 * time.Second
	in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, lookup) })
	in.Agent.Sim.SetFaults(sim.Faults{Delay: 4 * time.Second})
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := journey(t, in, in.DemoKey, input, nil)
			switch r.Status {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusPaymentRequired:
				refused.Add(1)
			default:
				t.Errorf("journey = %d %s", r.Status, r.Raw)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 50 || refused.Load() != 150 {
		t.Fatalf("admitted %d, refused %d; want exactly 50 and 150", ok.Load(), refused.Load())
	}
	b, err := budgets.Get(ctx, in.DB.Read(), tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.SpentMicros > b.LimitMicros || b.ReservedMicros != 0 {
		t.Fatalf("spent %d of %d with %d still reserved; want within the limit and nothing reserved", b.SpentMicros, b.LimitMicros, b.ReservedMicros)
	}
}

func TestClientDisconnectReleasesReservation(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	tenant, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	in.Agent.Sim.SetFaults(sim.Faults{Delay: 3 * time.Second})
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"input": "Where is my order ORD-1003?"})
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, in.URL+"/v1/journeys", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+in.DemoKey)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("request finished although the provider was slow")
	}
	var status string
	wait.For(10*time.Second, func() bool {
		in.DB.Read().QueryRow(`SELECT status FROM journeys ORDER BY id DESC LIMIT 1`).Scan(&status)
		return status == "cancelled"
	})
	if status != "cancelled" {
		t.Fatalf("journey status = %q after the client went away, want cancelled", status)
	}
	b, _ := budgets.Get(ctx, in.DB.Read(), tenant.ID)
	if b.ReservedMicros != 0 {
		t.Errorf("reserved = %d after a cancelled journey, want 0", b.ReservedMicros)
	}
}

func TestIdempotencyKey(t *testing.T) {
	in := startWardenDemo(t, nil)
	hdr := map[string]string{"Idempotency-Key": "retry-1"}
	first := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", hdr)
	if first.Status != http.StatusOK {
		t.Fatalf("first = %d %s", first.Status, first.Raw)
	}
	n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
	again := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", hdr)
	if again.Status != first.Status || !bytes.Equal(again.Raw, first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay = %d %s, want the first response", again.Status, again.Raw)
	}
	if countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`) != n {
		t.Error("the replay ran the journey again")
	}
	if r := journey(t, in, in.DemoKey, "Where is my order ORD-1002?", hdr); r.Status != http.StatusUnprocessableEntity || r.code() != "idempotency_mismatch" {
		t.Errorf("same key, other body = %d %s, want 422", r.Status, r.Raw)
	}

	// Concurrent duplicates run once.
	in.Agent.Sim.SetFaults(sim.Faults{Delay: 300 * time.Millisecond})
	hdr2 := map[string]string{"Idempotency-Key": "burst"}
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = journey(t, in, in.DemoKey, "Where is my order ORD-1001?", hdr2).str("id")
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("concurrent duplicates got ids %v, want one journey", ids)
		}
	}
	if got := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`); got != n+1 {
		t.Errorf("journeys %d, want %d (the burst ran once)", got, n+1)
	}
}

// receiptHook is a refund provider at the edge of the world whose receipt
// names the account paid in full, as real ones do, and identifies the
// refund with a random-looking id.
type receiptHook struct{ iban, refundID string }

func (h receiptHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"refund_id": h.refundID, "order_id": "ORD-1005", "status": "refunded",
		"amount_minor": 4550, "currency": "USD", "paid_to": h.iban})
}

// TestRedactionEndToEnd plants personal data in everything a client or a
// provider hands Warden — the journey input, the X-Correlation-Id and
// Idempotency-Key headers, a change request the simulated provider keeps,
// a provider's receipt — and then looks for it everywhere: the API's
// answers, the log, the audit trail, the raw database files, and every
// column of every table of warden.db and of the simulated provider's
// database.
func TestRedactionEndToEnd(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	key, err := redact.LoadOrCreateKey(filepath.Dir(in.DB.Path()))
	if err != nil {
		t.Fatal(err)
	}
	r := redact.New(key)
	planted := map[string]string{
		"card":              "4111 1111 1111 1111",
		"email":             "jane.roe+orders@example.org",
		"phone":             "+1 (415) 555-0132",
		"iban":              "DE89 3704 0044 0532 0130 00",
		"correlation email": "mia.wong@example.net",
		"idempotency email": "lee.park+retry@example.com",
		"change phone":      "+44 20 7946 0958",
		"receipt iban":      "GB29 NWBK 6016 1331 9268 19",
	}

	// The input, with a correlation id and an idempotency key that are
	// e-mail addresses.
	input := "Where is my order ORD-1003? Card " + planted["card"] + ", " + planted["email"] + ", " +
		planted["phone"] + ", IBAN " + planted["iban"] + "."
	hdr := map[string]string{"X-Correlation-Id": "case " + planted["correlation email"], "Idempotency-Key": planted["idempotency email"]}
	first := journey(t, in, in.DemoKey, input, hdr)
	if first.Status != http.StatusOK {
		t.Fatalf("journey = %d %s", first.Status, first.Raw)
	}
	if want := "case " + r.Token("email", planted["correlation email"]); first.str("correlation_id") != want {
		t.Errorf("correlation_id = %q, want the redacted %q", first.str("correlation_id"), want)
	}
	// The key is stored hashed, and still finds its answer.
	again := journey(t, in, in.DemoKey, input, hdr)
	if !bytes.Equal(again.Raw, first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry with the same Idempotency-Key = %d %s, want the first answer replayed", again.Status, again.Raw)
	}
	g := callAPI(t, ctx, http.MethodGet, in.URL+"/v1/journeys/"+first.str("id"), in.DemoKey, nil, nil)

	// A change request, which the simulated provider keeps.
	change := journey(t, in, in.DemoKey, "Please change the delivery address for ORD-1001: call "+planted["change phone"]+" before delivering", nil)
	if change.Status != http.StatusOK || change.str("status") != "completed" {
		t.Fatalf("change journey = %d %s", change.Status, change.Raw)
	}

	// A refund through a provider whose receipt names the account in full
	// and whose refund id looks random.
	const refundID = "re_3NqXz8L2eZvjdA1B0xYz1234"
	hook := httptest.NewServer(receiptHook{iban: planted["receipt iban"], refundID: refundID})
	defer hook.Close()
	refund, err := catalog.Get(ctx, in.DB.Read(), "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	refund.Provider, refund.WebhookURL, refund.MaxAttempts, refund.Timeout = tools.ProviderHTTP, hook.URL, 1, 5*time.Second
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, refund) }); err != nil {
		t.Fatal(err)
	}
	rj := journey(t, in, in.DemoKey, "ORD-1005 was charged twice, please refund $45.50", nil)
	if rj.Status != http.StatusAccepted {
		t.Fatalf("refund journey = %d %s", rj.Status, rj.Raw)
	}
	actionID := rj.Body["action"].(map[string]any)["id"].(string)
	decide(t, in, actionID, approvals.Approve, "")
	waitAction(t, in, actionID, approvals.StatusExecuted)
	// Reversing it takes the refund id from the ledger's redacted receipt.
	rev, err := in.Agent.Execution.Reverse(ctx, approverAlice, actionID, "customer kept the goods")
	if err != nil {
		t.Fatalf("reverse: %v", err)
	}
	revArgs, err := approvals.OpenArgs(ctx, in.DB.Read(), in.Agent.Journeys.Sealer(), rev.ID)
	if err != nil || string(revArgs) != `{"refund_id":"`+refundID+`"}` {
		t.Errorf("reversal arguments = %s, %v; want the provider's refund id", revArgs, err)
	}

	// What was stored is there, redacted: the scans below are not vacuous.
	var stored string
	in.DB.Read().QueryRow(`SELECT receipt FROM effects WHERE action_id = ?`, actionID).Scan(&stored)
	if !strings.Contains(stored, refundID) || !strings.Contains(stored, r.Token("iban", planted["receipt iban"])) {
		t.Errorf("ledger receipt = %s, want the refund id kept and the IBAN as its token", stored)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM idempotency`); n != 1 {
		t.Errorf("%d idempotency rows, want 1", n)
	}
	simDB, err := sql.Open("sqlite", "file:"+in.Agent.Sim.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer simDB.Close()
	if err := simDB.QueryRow(`SELECT change FROM change_requests ORDER BY created_at DESC LIMIT 1`).Scan(&stored); err != nil || !strings.Contains(stored, r.Token("phone", planted["change phone"])) {
		t.Errorf("the provider's change request = %q, %v; want the phone number as its token", stored, err)
	}

	forms := map[string][]string{}
	for kind, v := range planted {
		for _, f := range []string{v, strings.ReplaceAll(v, " ", ""), strings.ReplaceAll(strings.ReplaceAll(v, "(", ""), ")", "")} {
			if !slices.Contains(forms[kind], f) {
				forms[kind] = append(forms[kind], f)
			}
		}
	}
	answers := string(first.Raw) + string(again.Raw) + string(g.Raw) + string(change.Raw) + string(rj.Raw)
	logs := in.Logs.String()
	for kind, fs := range forms {
		for _, f := range fs {
			if strings.Contains(logs, f) {
				t.Errorf("%s %q reached the log", kind, f)
			}
			if strings.Contains(answers, f) {
				t.Errorf("%s %q is in an API answer", kind, f)
			}
		}
	}
	ev, _ := audit.List(ctx, in.DB.Read(), audit.Filter{Limit: 500})
	for _, e := range ev {
		b, _ := json.Marshal(e.Details)
		for kind, v := range planted {
			if strings.Contains(string(b), v) {
				t.Errorf("audit event %d holds the %s", e.Seq, kind)
			}
		}
	}
	for name, db := range map[string]*sql.DB{"warden.db": in.DB.Read(), "simprovider.db": simDB} {
		for _, hit := range findPlanted(t, db, forms) {
			t.Errorf("%s: %s", name, hit)
		}
	}
	// The files themselves, WAL included: a value written in the clear and
	// later overwritten could still sit in a page.
	in.DB.Read().Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	filepath.Walk(filepath.Dir(in.DB.Path()), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for kind, fs := range forms {
			for _, f := range fs {
				if bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(f))) {
					t.Errorf("%s %q is stored in the clear in %s", kind, f, filepath.Base(p))
				}
			}
		}
		return nil
	})
}

// findPlanted reads every column of every row of every table in db, as
// text, and reports each cell holding one of the forms (case ignored).
func findPlanted(t *testing.T, db *sql.DB, forms map[string][]string) []string {
	t.Helper()
	tables, err := store.TableNames(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("no tables to scan")
	}
	var hits []string
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + strings.ReplaceAll(table, `"`, `""`) + `"`)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		cells := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			for i, cell := range cells {
				text := strings.ToLower(cellText(cell))
				for kind, fs := range forms {
					for _, f := range fs {
						if strings.Contains(text, strings.ToLower(f)) {
							hits = append(hits, fmt.Sprintf("%s.%s holds the %s %q in the clear", table, cols[i], kind, f))
						}
					}
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		rows.Close()
	}
	return hits
}

// cellText is a scanned cell as text (PostgreSQL hands some columns over
// as times, numbers or JSON values rather than bytes).
func cellText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(v)
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// A correlation id too long to keep is refused with a 400 naming the
// header, and nothing runs; 128 characters are kept as sent.
func TestJourneyRefusesALongCorrelationID(t *testing.T) {
	in := startWardenDemo(t, nil)
	before := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
	r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", map[string]string{"X-Correlation-Id": strings.Repeat("c", 129)})
	if r.Status != http.StatusBadRequest || r.code() != "invalid_input" || !strings.Contains(string(r.Raw), "X-Correlation-Id") {
		t.Errorf("129-character correlation id = %d %s, want 400 invalid_input naming X-Correlation-Id", r.Status, r.Raw)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`); n != before {
		t.Errorf("journeys %d → %d, want none run", before, n)
	}
	long := strings.Repeat("c", 128)
	ok := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", map[string]string{"X-Correlation-Id": long})
	if ok.Status != http.StatusOK || ok.str("correlation_id") != long {
		t.Errorf("128-character correlation id = %d, correlation_id %q; want 200 and kept", ok.Status, ok.str("correlation_id"))
	}
}
