package web

// Regression tests for the security review's findings on money and agents
// (issue 8): each reproduces the attack and asserts the refusal.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// proposeRaw posts a body exactly as written, so number spellings reach
// Warden unchanged.
func proposeRaw(t testing.TB, in *instance, key, body string) apiResp {
	t.Helper()
	return callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/actions", key, []byte(body), nil)
}

// payoutHook is an HTTP tool provider that keeps the bodies it receives.
type payoutHook struct {
	mu     sync.Mutex
	bodies []string
}

func (h *payoutHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(b))
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"payout_id":"po_1","status":"paid"}`))
}

func (h *payoutHook) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// addPayoutTool registers a high-impact HTTP tool whose amount argument is
// named payout_cents (not amount_minor) and a key scoped to it.
func addPayoutTool(t testing.TB, in *instance, hookURL string) string {
	t.Helper()
	ctx := context.Background()
	payout := tools.Tool{Name: "send_payout", Impact: risk.ImpactHigh, Reversibility: risk.Irreversible,
		Provider: tools.ProviderHTTP, WebhookURL: hookURL, Timeout: 2 * time.Second, MaxAttempts: 1, Enabled: true, ApprovalTTL: time.Hour,
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"payee":{"type":"string"},"payout_cents":{"type":"integer","minimum":0},
			"ccy":{"type":"string"}},"required":["payee","payout_cents","ccy"],"additionalProperties":false}`),
		AmountArg: "payout_cents", CurrencyArg: "ccy", TargetArg: "payee"}
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, payout) }); err != nil {
		t.Fatal(err)
	}
	_, key := newKeyIn(t, in, "acme", "payout agent", []string{"tool:send_payout"}, "test")
	return key
}

// newKeyIn creates a key in tenant slug, created by createdBy.
func newKeyIn(t testing.TB, in *instance, slug, name string, scopes []string, createdBy string) (keys.Key, string) {
	t.Helper()
	ctx := context.Background()
	tenant, err := tenants.BySlug(ctx, in.DB.Read(), slug)
	if err != nil {
		t.Fatal(err)
	}
	var k keys.Key
	var secrets keys.Secrets
	err = in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		k, secrets, err = keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: tenant.ID, Name: name, Scopes: scopes, RatePerMin: 60000, Burst: 1000, CreatedBy: createdBy})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return k, secrets.Key
}

func countActions(t testing.TB, in *instance) int {
	t.Helper()
	var n int
	if err := in.DB.Read().QueryRow(`SELECT COUNT(*) FROM actions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Finding 1: an amount that is not a whole number was stored as 0 with one
// approver and shown as $0.00, while the provider received 500000.0.
func TestAmountSpellingsThatAreNotWholeNumbersAreRefused(t *testing.T) {
	in := startWardenDemo(t, nil)
	before := countActions(t, in)
	for _, amount := range []string{`500000.0`, `1e5`, `5E5`, `"500000"`, `9223372036854775808`, `-500`, `500000.5`} {
		body := `{"tool":"issue_refund","summary":"Refund","arguments":{"order_id":"ORD-1004","amount_minor":` + amount +
			`,"currency":"USD","account":"GB74BUKB20201555559182"}}`
		r := proposeRaw(t, in, in.DemoKey, body)
		if r.Status != http.StatusBadRequest || r.code() != "invalid_arguments" {
			t.Errorf("amount_minor %s = %d %s, want 400 invalid_arguments", amount, r.Status, r.Raw)
		}
		// The message states the rule of the tool's schema (minimum 1),
		// never "from 0".
		if strings.Contains(string(r.Raw), "from 0") {
			t.Errorf("amount_minor %s: the refusal says \"from 0\", but the schema's minimum is 1: %s", amount, r.Raw)
		}
		// The agent's top-level amount is parsed the same way.
		top := `{"tool":"issue_refund","summary":"Refund","amount":` + amount + `,"currency":"USD","arguments":{"order_id":"ORD-1004",` +
			`"amount_minor":500000,"currency":"USD","account":"GB74BUKB20201555559182"}}`
		if r := proposeRaw(t, in, in.DemoKey, top); r.Status != http.StatusBadRequest {
			t.Errorf("top-level amount %s = %d %s, want 400", amount, r.Status, r.Raw)
		}
	}
	// Members named twice, or twice but for case: JSON readers disagree
	// on which one counts, so Warden could weigh $1.00 while a provider
	// pays $5,000.00.
	for _, args := range []string{
		`{"order_id":"ORD-1004","amount_minor":500000.0,"amount_minor":100,"currency":"USD","account":"GB74BUKB20201555559182"}`,
		`{"order_id":"ORD-1004","amount_minor":100,"AMOUNT_MINOR":500000,"currency":"USD","account":"GB74BUKB20201555559182"}`,
	} {
		if r := proposeRaw(t, in, in.DemoKey, `{"tool":"issue_refund","summary":"Refund","arguments":`+args+`}`); r.Status != http.StatusBadRequest || r.code() != "invalid_arguments" {
			t.Errorf("arguments %s = %d %s, want 400 invalid_arguments", args, r.Status, r.Raw)
		}
	}
	if n := countActions(t, in); n != before {
		t.Errorf("refused proposals recorded %d actions", n-before)
	}
}

// Finding 1, end to end: what the approver is shown, what decides the
// number of approvers and what the provider receives are one value.
func TestShownPolicyAndSentAmountAreTheSame(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	hook := &payoutHook{}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	key := addPayoutTool(t, in, srv.URL)

	r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"acct-77","payout_cents":500000,"ccy":"USD"}}`)
	if r.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	id := r.str("id")
	if got := r.Body["approvals_required"]; got != float64(2) {
		t.Errorf("approvals_required = %v, want 2 for $5,000.00 with the $1,000.00 threshold", got)
	}
	alice, bob := newBrowser(t, in.URL), newBrowser(t, in.URL)
	alice.loginDev("alice")
	bob.loginDev("bob")
	p := alice.get("/approvals/" + id)
	if got := text(p, "action-amount"); got != "$5,000.00" {
		t.Errorf("action page amount = %q, want $5,000.00", got)
	}
	a := getAction(t, in, id)
	for _, b := range []*browser{alice, bob} {
		if p := b.post("/approvals/"+id+"/decide", b.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status != http.StatusOK {
			t.Fatalf("approve = %d", p.Status)
		}
	}
	waitStatus(t, alice, id, approvals.StatusExecuted)
	got := hook.received()
	if len(got) != 1 {
		t.Fatalf("the provider got %d calls, want 1", len(got))
	}
	var sent struct {
		Arguments struct {
			PayoutCents json.Number `json:"payout_cents"`
		} `json:"arguments"`
	}
	dec := json.NewDecoder(strings.NewReader(got[0]))
	dec.UseNumber()
	if err := dec.Decode(&sent); err != nil || sent.Arguments.PayoutCents.String() != "500000" {
		t.Errorf("the provider received payout_cents %q (%v) in %s, want exactly 500000", sent.Arguments.PayoutCents, err, got[0])
	}
}

// Finding 1, property: for any JSON number spelling of an amount, the
// stored (shown) amount, the amount dual control weighed and the amount
// in the sealed arguments sent to the provider are the same integer, or
// the call is refused.
func TestAnyAmountSpellingIsOneValueOrRefused(t *testing.T) {
	in := startWardenDemo(t, nil)
	key := addPayoutTool(t, in, "http://127.0.0.1:1/never-called")
	sealer := in.Agent.Journeys.Sealer()
	accepted := 0
	rapid.Check(t, func(rt *rapid.T) {
		// Most draws are plain integers, so that accepted amounts are
		// checked as often as refused ones.
		whole := rapid.StringMatching(`(0|[1-9][0-9]{0,19})`).Draw(rt, "whole")
		if rapid.IntRange(0, 3).Draw(rt, "negative") == 0 {
			whole = "-" + whole
		}
		frac := rapid.SampledFrom([]string{"", "", "", "", ".0", ".50", ".000"}).Draw(rt, "frac")
		exp := rapid.SampledFrom([]string{"", "", "", "", "e0", "e3", "E+2", "e-1"}).Draw(rt, "exp")
		spelling := whole + frac + exp
		if rapid.IntRange(0, 3).Draw(rt, "quoted") == 0 {
			spelling = `"` + spelling + `"`
		}
		r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"p","payout_cents":`+spelling+`,"ccy":"USD"}}`)
		if r.Status == http.StatusBadRequest {
			return
		}
		if r.Status != http.StatusAccepted {
			rt.Fatalf("payout_cents %s = %d %s", spelling, r.Status, r.Raw)
		}
		exact, ok := new(big.Int).SetString(spelling, 10)
		if !ok {
			rt.Fatalf("payout_cents %s was accepted but is not an integer literal", spelling)
		}
		a, err := approvals.Get(context.Background(), in.DB.Read(), r.str("id"))
		if err != nil || a.AmountMinor == nil || exact.Cmp(big.NewInt(*a.AmountMinor)) != 0 {
			rt.Fatalf("payout_cents %s stored as %v (%v)", spelling, a.AmountMinor, err)
		}
		wantApprovals := 1
		if *a.AmountMinor >= 100_000 {
			wantApprovals = 2
		}
		// Payees differ per call ("p" reused adds up): only the amount's
		// own threshold can apply when the first reaches it.
		if a.ApprovalsRequired < wantApprovals {
			rt.Fatalf("payout_cents %s needs %d approvers, want at least %d", spelling, a.ApprovalsRequired, wantApprovals)
		}
		raw, err := approvals.OpenArgs(context.Background(), in.DB.Read(), sealer, a.ID)
		if err != nil {
			rt.Fatal(err)
		}
		var sent map[string]json.RawMessage
		json.Unmarshal(raw, &sent)
		if string(sent["payout_cents"]) != exact.String() {
			rt.Fatalf("payout_cents %s is sent as %s, shown as %d", spelling, sent["payout_cents"], *a.AmountMinor)
		}
		accepted++
		// Cancel it so the next draw's cumulative sum starts afresh.
		callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/actions/"+a.ID+"/cancel", key, nil, nil)
	})
	t.Logf("%d generated amounts accepted", accepted)
	if accepted == 0 {
		t.Error("no generated amount was accepted: the property was never checked on an accepted call")
	}
}

// Finding 2: a $2,400 refund split into three of $800 needed one approver
// each. The second crosses $1,000 on the same order and needs two.
func TestSplitRefundsOnOneTargetNeedDualControl(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	refund := func() apiResp {
		return proposeRaw(t, in, in.DemoKey, `{"tool":"issue_refund","summary":"Refund part","arguments":{"order_id":"ORD-1008",`+
			`"amount_minor":80000,"currency":"USD","account":"BE66068210986343"}}`)
	}
	first, second, third := refund(), refund(), refund()
	for i, r := range []apiResp{first, second, third} {
		if r.Status != http.StatusAccepted {
			t.Fatalf("refund %d = %d %s", i+1, r.Status, r.Raw)
		}
	}
	if first.Body["approvals_required"] != float64(1) || second.Body["approvals_required"] != float64(2) || third.Body["approvals_required"] != float64(2) {
		t.Errorf("approvals required = %v, %v, %v; want 1, 2, 2", first.Body["approvals_required"], second.Body["approvals_required"], third.Body["approvals_required"])
	}
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	p := alice.get("/approvals/" + second.str("id"))
	if got := text(p, "action-approval-basis"); !strings.Contains(got, "Cumulative $1,600.00 for ORD-1008 over 24 h") {
		t.Errorf("approval basis = %q, want the cumulative amount on ORD-1008", got)
	}
	if got := text(p, "action-approvals"); got != "0 of 2" {
		t.Errorf("approvals = %q, want 0 of 2", got)
	}
	// Rejected actions no longer count: after rejecting all three, one
	// $800 refund needs one approver again.
	for _, r := range []apiResp{first, second, third} {
		a := getAction(t, in, r.str("id"))
		alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Reject, "split refund", a.PayloadDigest)), nil)
	}
	if r := refund(); r.Body["approvals_required"] != float64(1) {
		t.Errorf("after rejections approvals required = %v, want 1", r.Body["approvals_required"])
	}
}

// Issue 21, finding 2: split refunds of one order proposed at the same
// moment were each counted against the order's total before any of the
// others was recorded, so on PostgreSQL all of them needed one approver
// ($1,248 of a $1,249 order moved on one approval). Proposed at once, as
// one after the other, exactly the ones the sequential rule lets through
// need one approver.
func TestSplitRefundsProposedAtOnceNeedDualControl(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	for _, tt := range []struct {
		order   string
		amount  int64
		wantOne int
	}{
		{"ORD-1008", 41_600, 2}, // $416 × 3 of a $1,249 order: the third reaches $1,000
		{"ORD-1010", 80_000, 1}, // $800 × 3: the second reaches $1,000
	} {
		body := fmt.Sprintf(`{"tool":"issue_refund","summary":"Refund part","arguments":{"order_id":%q,`+
			`"amount_minor":%d,"currency":"USD","account":"BE66068210986343"}}`, tt.order, tt.amount)
		start := make(chan struct{})
		var wg sync.WaitGroup
		required := make([]any, 3)
		for i := range required {
			wg.Go(func() {
				<-start
				req, _ := http.NewRequest(http.MethodPost, in.URL+"/v1/actions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+in.DemoKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				var out map[string]any
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &out) != nil {
					t.Errorf("refund on %s = %d %s", tt.order, resp.StatusCode, raw)
					return
				}
				required[i] = out["approvals_required"]
			})
		}
		close(start)
		wg.Wait()
		one := 0
		for _, r := range required {
			if r == float64(1) {
				one++
			}
		}
		if one != tt.wantOne {
			t.Errorf("three refunds of %s on %s proposed at once need %v approvers; want %d of them to need one",
				money.Format(money.Amount{Minor: tt.amount, Currency: money.MustCurrency("USD")}), tt.order, required, tt.wantOne)
		}
	}
}

// Finding 2: a tool whose amount field has another name needed one
// approver whenever the agent left the top-level amount out; and a call
// without the declared amount is refused.
func TestDeclaredAmountDecidesDualControl(t *testing.T) {
	in := startWardenDemo(t, nil)
	key := addPayoutTool(t, in, "http://127.0.0.1:1/never-called")
	r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"acct-1","payout_cents":240000,"ccy":"USD"}}`)
	if r.Status != http.StatusAccepted || r.Body["approvals_required"] != float64(2) || r.Body["amount"] != float64(240000) {
		t.Errorf("payout of $2,400.00 without a top-level amount = %d %s, want 2 approvers and amount 240000", r.Status, r.Raw)
	}
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","amount":100,"currency":"USD","arguments":{"payee":"acct-2","payout_cents":240000,"ccy":"USD"}}`); r.Status != http.StatusBadRequest {
		t.Errorf("a top-level amount that differs from the declared one = %d %s, want 400", r.Status, r.Raw)
	}
	// The declared amount missing: the schema here requires it too, so
	// loosen the schema to see the catalog's own rule refuse it.
	ctx := context.Background()
	t2, _ := catalog.Get(ctx, in.DB.Read(), "send_payout")
	t2.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"payee":{"type":"string"},"payout_cents":{"type":"integer"},"ccy":{"type":"string"}}}`)
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, t2) }); err != nil {
		t.Fatal(err)
	}
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"acct-3","ccy":"USD"}}`); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), "payout_cents") {
		t.Errorf("a call without its declared amount = %d %s, want 400 naming payout_cents", r.Status, r.Raw)
	}
}

// Finding 8: 1000 minor units of KWD were shown as "10.00 KWD", ZZZ was
// accepted, and the threshold compared minor units across currencies.
func TestCurrenciesHaveTheirOwnDecimalsAndThresholds(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	key := addPayoutTool(t, in, "http://127.0.0.1:1/never-called")
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"a","payout_cents":1000,"ccy":"ZZZ"}}`); r.Status != http.StatusBadRequest {
		t.Errorf("currency ZZZ = %d %s, want 400", r.Status, r.Raw)
	}
	// No KWD threshold: two approvers for any amount (fail closed).
	r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"kw-1","payout_cents":1000,"ccy":"KWD"}}`)
	if r.Status != http.StatusAccepted || r.Body["approvals_required"] != float64(2) {
		t.Fatalf("KWD payout without a KWD threshold = %d %s, want 2 approvers", r.Status, r.Raw)
	}
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	p := erin.get("/approvals/" + r.str("id"))
	if p.Status == http.StatusForbidden {
		alice := newBrowser(t, in.URL)
		alice.loginDev("alice")
		p = alice.get("/approvals/" + r.str("id"))
	}
	if got := text(p, "action-amount"); got != "1.000 KWD" {
		t.Errorf("KWD 1000 minor units shown as %q, want 1.000 KWD", got)
	}
	if got := text(p, "action-approval-basis"); !strings.Contains(got, "No dual-control threshold is set for KWD") {
		t.Errorf("approval basis = %q", got)
	}
	// A KWD threshold of 5.000: 1.000 KWD needs one approver; 6.000 two.
	for _, bad := range []url.Values{
		{"currency": {"KWD"}, "dual_control": {"5.0005"}},
		{"currency": {"ZZZ"}, "dual_control": {"5"}},
		{"currency": {"KWD"}, "dual_control": {"+5"}},
		{"currency": {"USD"}, "dual_control": {"$1000"}},
		{"currency": {"KWD"}, "dual_control": {"5 KWD"}},
	} {
		if p := erin.post("/tenants/acme/dual-control", erin.withCSRF(bad), nil); p.Status != http.StatusUnprocessableEntity {
			t.Errorf("threshold %v = %d, want 422", bad, p.Status)
		}
	}
	// A threshold where none was loosens (none: two approvers for any
	// amount), so a second admin approves it.
	approveAsFrank(t, in, erin.post("/tenants/acme/dual-control", erin.withCSRF(url.Values{"currency": {"KWD"}, "dual_control": {"5.000"}}), nil))
	p = erin.get("/tenants/acme")
	if got := text(p, "tenant-dual-control"); !strings.Contains(got, "5.000 KWD") || !strings.Contains(got, "$1,000.00") {
		t.Errorf("thresholds shown = %q, want $1,000.00 and 5.000 KWD", got)
	}
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"kw-2","payout_cents":1000,"ccy":"KWD"}}`); r.Body["approvals_required"] != float64(1) {
		t.Errorf("1.000 KWD under a 5.000 KWD threshold = %s, want 1 approver", r.Raw)
	}
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"kw-3","payout_cents":6000,"ccy":"KWD"}}`); r.Body["approvals_required"] != float64(2) {
		t.Errorf("6.000 KWD over a 5.000 KWD threshold = %s, want 2 approvers", r.Raw)
	}
	// 6000 minor units of USD ($60) stays under the USD threshold.
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"us-1","payout_cents":6000,"ccy":"USD"}}`); r.Body["approvals_required"] != float64(1) {
		t.Errorf("$60.00 = %s, want 1 approver", r.Raw)
	}
	// Removing the KWD threshold fails closed again.
	erin.post("/tenants/acme/dual-control/remove", erin.withCSRF(url.Values{"currency": {"KWD"}}), nil)
	if r := proposeRaw(t, in, key, `{"tool":"send_payout","summary":"Pay out","arguments":{"payee":"kw-4","payout_cents":1000,"ccy":"KWD"}}`); r.Body["approvals_required"] != float64(2) {
		t.Errorf("after removing the KWD threshold = %s, want 2 approvers", r.Raw)
	}
	// A window so large it would overflow a duration is refused, not
	// stored as something else.
	for _, bad := range []string{"5124097", "0", "2161", "twelve", "+24", "24.0", " 1e2"} {
		if p := erin.post("/tenants/acme/dual-control-window", erin.withCSRF(url.Values{"window_hours": {bad}}), nil); p.Status != http.StatusUnprocessableEntity {
			t.Errorf("window %q = %d, want 422", bad, p.Status)
		}
	}
	p = erin.post("/tenants/acme/dual-control-window", erin.withCSRF(url.Values{"window_hours": {"48"}}), nil)
	if got := text(p, "tenant-dual-control-window"); !strings.HasPrefix(got, "48 h") {
		t.Errorf("window shown = %q, want 48 h", got)
	}
	if evs := adminEvents(t, in.DB, "tenant.dual_control_removed"); len(evs) != 1 {
		t.Errorf("tenant.dual_control_removed events = %d, want 1", len(evs))
	}
}

// Finding 4: the agent whose refund was reversed could cancel the
// reversal, and a finished reversal blocked every new one.
func TestReversalBelongsToThePersonWhoAskedForIt(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	r := proposeRaw(t, in, in.DemoKey, `{"tool":"issue_refund","summary":"Refund","arguments":{"order_id":"ORD-1006",`+
		`"amount_minor":5000,"currency":"USD","account":"ES5420850166610330174627"}}`)
	if r.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	alice, bob := newBrowser(t, in.URL), newBrowser(t, in.URL)
	alice.loginDev("alice")
	bob.loginDev("bob")
	orig := getAction(t, in, r.str("id"))
	bob.post("/approvals/"+orig.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", orig.PayloadDigest)), nil)
	waitStatus(t, alice, orig.ID, approvals.StatusExecuted)

	reverse := func() approvals.Action {
		t.Helper()
		p := alice.post("/approvals/"+orig.ID+"/reverse", alice.withCSRF(url.Values{"reason": {"customer returned the goods"}}), nil)
		id := strings.TrimPrefix(p.URL.Path, "/approvals/")
		if p.Status != http.StatusOK || id == orig.ID {
			t.Fatalf("reverse = %d at %s", p.Status, p.URL)
		}
		return getAction(t, in, id)
	}
	rev := reverse()
	c := callAPI(t, context.Background(), http.MethodPost, in.URL+"/v1/actions/"+rev.ID+"/cancel", in.DemoKey, nil, nil)
	if c.Status != http.StatusNotFound {
		t.Errorf("the agent cancelling a person's reversal = %d %s, want 404", c.Status, c.Raw)
	}
	if got := getAction(t, in, rev.ID); got.Status != approvals.StatusPending || got.KeyID != "" || got.RequestedBy == "" {
		t.Errorf("reversal = %s key %q requested by %q, want pending, no key, a person", got.Status, got.KeyID, got.RequestedBy)
	}
	if again := reverse(); again.ID != rev.ID {
		t.Errorf("pressing Reverse again while one is pending made %s, want %s", again.ID, rev.ID)
	}
	bob.post("/approvals/"+rev.ID+"/decide", bob.withCSRF(decideForm(approvals.Reject, "wrong refund picked", rev.PayloadDigest)), nil)
	if got := getAction(t, in, rev.ID); got.Status != approvals.StatusRejected {
		t.Fatalf("reversal status = %s, want rejected", got.Status)
	}
	// The console offers Reverse again, and says the earlier one ended.
	p := alice.get("/approvals/" + orig.ID)
	if _, ok := p.Doc.Find(`[data-testid="reverse"]`).Attr("href"); !ok {
		t.Error("after a rejected reversal the action page does not offer Reverse")
	}
	if c := alice.get("/approvals/" + orig.ID + "/reverse"); !strings.Contains(strings.ToLower(text(c, "earlier-reversal")), "rejected") {
		t.Errorf("the confirmation says %q, want that the earlier reversal was rejected", text(c, "earlier-reversal"))
	}
	next := reverse()
	if next.ID == rev.ID || next.Status != approvals.StatusPending || next.Compensates != orig.ID {
		t.Errorf("after a rejected reversal, Reverse gave %s (%s), want a new pending reversal", next.ID, next.Status)
	}
}

// Finding 9: a principal who created a key could approve what an agent
// proposed through it, since the proposal had no RequestedBy.
func TestKeyCreatorCannotApproveTheKeysProposal(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	var aliceID string
	if err := in.DB.Read().QueryRow(`SELECT id FROM principals WHERE name = 'Alice Approver'`).Scan(&aliceID); err != nil {
		t.Fatal(err)
	}
	_, key := newKeyIn(t, in, "acme", "alice's agent", []string{"tool:issue_refund"}, aliceID)
	r := proposeRaw(t, in, key, `{"tool":"issue_refund","summary":"Refund","arguments":{"order_id":"ORD-1006",`+
		`"amount_minor":1000,"currency":"USD","account":"ES5420850166610330174627"}}`)
	if r.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	a := getAction(t, in, r.str("id"))
	p := alice.get("/approvals/" + a.ID)
	if p.Doc.Find(`[data-testid="approve-form"]`).Length() != 0 || !strings.Contains(text(p, "decide-blocked"), "key you created") {
		t.Error("the action page offers alice a decision on her own key's proposal")
	}
	p = alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil)
	if p.Status != http.StatusForbidden || decisionCount(t, in, a.ID) != 0 {
		t.Errorf("alice approving her own key's proposal = %d with %d decisions, want 403 and none", p.Status, decisionCount(t, in, a.ID))
	}
	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	if p := bob.post("/approvals/"+a.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", a.PayloadDigest)), nil); p.Status != http.StatusOK {
		t.Errorf("bob approving = %d, want 200", p.Status)
	}
}

// Finding 10: any key of a tenant could read every action and journey of
// the tenant.
func TestKeysReadOnlyWhatTheyCreatedUnlessScopedToTheTenant(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	r := proposeRaw(t, in, in.DemoKey, `{"tool":"issue_refund","summary":"Refund","arguments":{"order_id":"ORD-1006",`+
		`"amount_minor":1000,"currency":"USD","account":"ES5420850166610330174627"}}`)
	j := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusAccepted || j.Status != http.StatusOK {
		t.Fatalf("propose = %d, journey = %d", r.Status, j.Status)
	}
	_, narrow := newKeyIn(t, in, "acme", "status bot", []string{"skill:order_status"}, "test")
	_, reader := newKeyIn(t, in, "acme", "auditor bot", []string{"skill:order_status", keys.ScopeReadTenant}, "test")
	for _, path := range []string{"/v1/actions/" + r.str("id"), "/v1/journeys/" + j.str("id")} {
		if g := callAPI(t, ctx, http.MethodGet, in.URL+path, narrow, nil, nil); g.Status != http.StatusNotFound {
			t.Errorf("GET %s with another key = %d, want 404", path, g.Status)
		}
		if g := callAPI(t, ctx, http.MethodGet, in.URL+path, reader, nil, nil); g.Status != http.StatusOK {
			t.Errorf("GET %s with read:tenant = %d, want 200", path, g.Status)
		}
		if g := callAPI(t, ctx, http.MethodGet, in.URL+path, in.DemoKey, nil, nil); g.Status != http.StatusOK {
			t.Errorf("GET %s with the creating key = %d, want 200", path, g.Status)
		}
	}
}

// Finding 5 (callback URLs): the query of an agent's callback URL was
// stored in the clear; it is redacted at rest, and the callback still
// reaches the URL the agent gave.
func TestCallbackURLQueryIsRedactedAtRestButStillCalled(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
	}))
	defer srv.Close()
	const email, token = "jane.doe@example.com", "tok-8c1f0e2d9a"
	cb := srv.URL + "/hook?customer=" + url.QueryEscape(email) + "&token=" + token
	raw, _ := json.Marshal(map[string]any{"tool": "issue_refund", "summary": "Refund", "callback_url": cb,
		"arguments": map[string]any{"order_id": "ORD-1006", "amount_minor": 1000, "currency": "USD", "account": "ES5420850166610330174627"}})
	r := proposeRaw(t, in, in.DemoKey, string(raw))
	if r.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	var stored string
	in.DB.Read().QueryRow(`SELECT callback_url || callback_url_sealed FROM actions WHERE id = ?`, r.str("id")).Scan(&stored)
	if stored == "" || strings.Contains(stored, email) || strings.Contains(stored, "jane.doe") || strings.Contains(stored, token) {
		t.Errorf("stored callback URL = %q, want its query redacted", stored)
	}
	a := getAction(t, in, r.str("id"))
	decide(t, in, a.ID, approvals.Reject, "not needed")
	wait.For(10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(queries) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(queries) == 0 || !strings.Contains(queries[0], "token="+token) {
		t.Errorf("callbacks reached the agent with queries %q, want the original query", queries)
	}
}

// Finding 2 (review of the fix): spelling one target differently, or
// splitting it across currencies, does not escape the running total.
func TestSplitsCannotDodgeTheTargetTotalBySpellingOrCurrency(t *testing.T) {
	in := startWardenDemo(t, nil)
	key := addPayoutTool(t, in, "http://127.0.0.1:1/never-called")
	pay := func(payee string, cents int, ccy string) apiResp {
		body, _ := json.Marshal(map[string]any{"tool": "send_payout", "summary": "Pay out",
			"arguments": map[string]any{"payee": payee, "payout_cents": cents, "ccy": ccy}})
		return proposeRaw(t, in, key, string(body))
	}
	if r := pay("ACCT-9", 80_000, "USD"); r.Body["approvals_required"] != float64(1) {
		t.Fatalf("first $800 = %s, want 1 approver", r.Raw)
	}
	if r := pay(" acct-9", 80_000, "USD"); r.Body["approvals_required"] != float64(2) {
		t.Errorf("the same payee spelt \" acct-9\" = %s, want 2 approvers", r.Raw)
	}
	// EUR has its own threshold, so only the mixed currencies count.
	ctx := context.Background()
	acme, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	in.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tenants.SetThresholdTx(ctx, tx, acme.ID, tenants.Threshold{Currency: "EUR", Minor: 100_000})
		return err
	})
	if r := pay("ACCT-10", 80_000, "EUR"); r.Body["approvals_required"] != float64(1) {
		t.Fatalf("€800 to another payee = %s, want 1 approver", r.Raw)
	}
	if r := pay("ACCT-9", 80_000, "EUR"); r.Body["approvals_required"] != float64(2) {
		t.Errorf("the same payee in EUR = %s, want 2 approvers", r.Raw)
	}
}
