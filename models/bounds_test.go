package models_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

var testActor = audit.Actor{Type: audit.ActorSystem, ID: "test"}

// gwRig is a gateway on a real database in front of the fake upstream
// (on loopback, listed in the allowed hosts unless asked not to).
type gwRig struct {
	t      *testing.T
	db     *store.DB
	sealer *seal.Sealer
	g      *models.Gateway
	fake   *fakeupstream.Server
	url    string // the fake's base URL
	tenant tenants.Tenant
	caller admission.Caller
}

type rigOptions struct {
	limitMicros int64
	unlisted    bool // do not list the fake's host in the allowed hosts
	redactor    *redact.Redactor
	limits      models.KeyLimits
}

func newGWRig(t *testing.T, o rigOptions, deps ...models.Deployment) *gwRig {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeupstream.New()
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	r := &gwRig{t: t, db: db, sealer: sealer, fake: fake, url: up.URL + "/v1"}
	if !o.unlisted {
		if _, err := models.AllowHosts(ctx, db, testActor, "127.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range deps {
		if d.BaseURL == "" {
			d.BaseURL = r.url
		}
		if _, err := models.Create(ctx, db, sealer, testActor, d, "sk-upstream-secret"); err != nil {
			t.Fatal(err)
		}
	}
	if o.limitMicros == 0 {
		o.limitMicros = 1_000_000_000
	}
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		if r.tenant, err = tenants.Insert(ctx, tx, "t1", "T1"); err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Month, LimitMicros: o.limitMicros, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	key := keys.Key{ID: "k1", TenantID: r.tenant.ID, TenantSlug: "t1", Name: "bot", Scopes: []string{"model:chat"}}
	if o.limits != (models.KeyLimits{}) {
		if _, err := models.SetKeyLimits(ctx, db, testActor, key, o.limits); err != nil {
			t.Fatal(err)
		}
	}
	r.g = models.NewGateway(db, sealer, o.redactor, nil)
	r.caller = admission.Caller{Tenant: r.tenant, Key: key}
	return r
}

// dep is a deployment of alias chat at the fake upstream, priced as a
// large model is: $10 a million input tokens, $30 a million output
// tokens, a context window of a million tokens, an output cap of 4096.
func dep(name, upstream string) models.Deployment {
	return models.Deployment{Name: name, Alias: "chat", UpstreamModel: upstream, InputMicrosPerM: 10_000_000, OutputMicrosPerM: 30_000_000,
		ContextWindow: 1 << 20, MaxOutputTokens: 4096, Timeout: 10 * time.Second, Concurrency: 8, Enabled: true}
}

type chatResult struct {
	status int
	body   []byte
	err    error
}

func (r *gwRig) chat(body string) chatResult {
	r.t.Helper()
	w := httptest.NewRecorder()
	err := r.g.Chat(context.Background(), r.caller, []byte(body), flusher{w})
	if err != nil {
		return chatResult{status: problem.From(err).Status(), err: err}
	}
	return chatResult{status: w.Code, body: w.Body.Bytes()}
}

func (r *gwRig) calls() []models.Call {
	r.t.Helper()
	cs, err := models.Calls(context.Background(), r.db.Read(), nil, 100)
	if err != nil {
		r.t.Fatal(err)
	}
	return cs
}

func (r *gwRig) budget() budgets.Budget {
	r.t.Helper()
	b, err := budgets.Get(context.Background(), r.db.Read(), r.tenant.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// priced is what tokens cost at dep's prices, rounded up per kind.
func priced(in, out int64) int64 {
	return (in*10_000_000+999_999)/1_000_000 + (out*30_000_000+999_999)/1_000_000
}

// assertBounded checks the one call made: answered, charged exactly the
// usage the upstream reported at the deployment's prices, within its
// reservation, and the budget agrees.
func (r *gwRig) assertBounded(res chatResult, wantOut int64) models.Call {
	r.t.Helper()
	if res.status != http.StatusOK {
		r.t.Fatalf("call = %d %v %s", res.status, res.err, res.body)
	}
	var answer struct {
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(res.body, &answer); err != nil {
		r.t.Fatal(err)
	}
	cs := r.calls()
	if len(cs) != 1 {
		r.t.Fatalf("calls = %+v", cs)
	}
	c := cs[0]
	billed := priced(answer.Usage.PromptTokens, answer.Usage.CompletionTokens)
	if wantOut > 0 && answer.Usage.CompletionTokens != wantOut {
		r.t.Fatalf("the upstream reported %d completion tokens, want %d", answer.Usage.CompletionTokens, wantOut)
	}
	if c.InputTokens != answer.Usage.PromptTokens || c.OutputTokens != answer.Usage.CompletionTokens || c.Usage != models.UsageReported {
		r.t.Errorf("recorded usage %d/%d (%s), the upstream reported %d/%d", c.InputTokens, c.OutputTokens, c.Usage,
			answer.Usage.PromptTokens, answer.Usage.CompletionTokens)
	}
	if c.CostMicros != billed {
		r.t.Errorf("the tenant was charged %d µ for usage the upstream bills %d µ", c.CostMicros, billed)
	}
	if c.ReservedMicros < billed || c.OverrunMicros != 0 {
		r.t.Errorf("reserved %d µ (overrun %d µ) for a call the upstream bills %d µ: the reservation must bound it", c.ReservedMicros, c.OverrunMicros, billed)
	}
	if b := r.budget(); b.SpentMicros != billed || b.ReservedMicros != 0 {
		r.t.Errorf("budget spent %d reserved %d, want %d and 0", b.SpentMicros, b.ReservedMicros, billed)
	}
	return c
}

// n choices each use the output cap: 128 × 4096 tokens are reserved and
// charged, not one answer's worth.
func TestChatReservationBoundsManyChoices(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("big", "verbose"))
	res := r.chat(`{"model":"chat","n":128,"max_tokens":4096,"messages":[{"role":"user","content":"hi"}]}`)
	c := r.assertBounded(res, 128*4096)
	t.Logf("reported 524288 completion tokens: charged %d µ, reserved %d µ", c.CostMicros, c.ReservedMicros)

	// More choices than any upstream gives, or not a whole number: refused
	// before anything is reserved or sent.
	for _, n := range []string{"129", "0", "-1", "1.5", `"2"`} {
		if res := r.chat(`{"model":"chat","n":` + n + `,"messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusBadRequest {
			t.Errorf("n %s = %d %v, want 400", n, res.status, res.err)
		}
	}
	if r.fake.Requests() != 1 {
		t.Errorf("the upstream saw %d requests, want 1", r.fake.Requests())
	}
}

// 900 KiB in a tool's description is prompt the upstream bills: it is
// reserved and charged.
func TestChatReservationBoundsToolDescriptions(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("big", "fake"))
	tools, _ := json.Marshal([]any{map[string]any{"type": "function", "function": map[string]any{
		"name": "lookup", "description": strings.Repeat("describe the tool at length ", 900<<10/28),
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}})
	res := r.chat(`{"model":"chat","tools":` + string(tools) + `,"messages":[{"role":"user","content":"hi"}]}`)
	c := r.assertBounded(res, 0)
	if c.InputTokens < 200_000 {
		t.Fatalf("the fake upstream billed %d prompt tokens for 900 KiB of tools, want a real upstream's count (above 200000)", c.InputTokens)
	}
	t.Logf("reported %d prompt tokens: charged %d µ, reserved %d µ", c.InputTokens, c.CostMicros, c.ReservedMicros)

	// Schemas and tool choice count the same way.
	r2 := newGWRig(t, rigOptions{}, dep("big", "fake"))
	schema := `{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","description":"` + strings.Repeat("very long schema ", 20000) + `"}}}`
	r2.assertBounded(r2.chat(`{"model":"chat","response_format":`+schema+`,"messages":[{"role":"user","content":"hi"}]}`), 0)
}

// What Warden cannot bound is refused with a clear 400 before anything is
// reserved or sent.
func TestChatUnboundableMembersAreRefused(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("big", "fake"))
	for _, tt := range []struct{ name, body, code, says string }{
		{"image part", `{"model":"chat","messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`,
			"unsupported_content", "image_url"},
		{"audio input", `{"model":"chat","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]}`,
			"unsupported_content", "input_audio"},
		{"audio output", `{"model":"chat","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"hi"}]}`,
			"unsupported_field", "audio"},
		{"web search", `{"model":"chat","web_search_options":{},"messages":[{"role":"user","content":"hi"}]}`, "unsupported_field", "web_search_options"},
		{"predicted output", `{"model":"chat","prediction":{"type":"content","content":"x"},"messages":[{"role":"user","content":"hi"}]}`, "unsupported_field", "prediction"},
		{"priority tier", `{"model":"chat","service_tier":"priority","messages":[{"role":"user","content":"hi"}]}`, "unsupported_field", "service_tier"},
		{"assistant audio", `{"model":"chat","messages":[{"role":"assistant","audio":{"id":"a1"}},{"role":"user","content":"hi"}]}`, "unsupported_field", "audio"},
		{"unknown role", `{"model":"chat","messages":[{"role":"wizard","content":"hi"}]}`, "invalid_request", "role"},
	} {
		res := r.chat(tt.body)
		p := problem.From(res.err)
		if res.status != http.StatusBadRequest || p.Code != tt.code || !strings.Contains(p.Message, tt.says) {
			t.Errorf("%s = %d %v, want 400 %s naming %q", tt.name, res.status, res.err, tt.code, tt.says)
		}
	}
	// What Warden's own callers and OpenAI's SDKs send still passes.
	if res := r.chat(`{"model":"chat","temperature":0,"top_p":1,"stop":["x"],"seed":1,"user":"u","store":false,"metadata":{"a":"b"},` +
		`"parallel_tool_calls":true,"tool_choice":"auto","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],` +
		`"stream_options":{"include_usage":false},"service_tier":"auto","modalities":["text"],"max_completion_tokens":5,` +
		`"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"}]}]}`); res.status != http.StatusOK {
		t.Errorf("an ordinary request = %d %v", res.status, res.err)
	}
	if r.fake.Requests() != 1 {
		t.Errorf("the upstream saw %d requests, want only the ordinary one", r.fake.Requests())
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Errorf("reserved %d after refused calls", b.ReservedMicros)
	}
}

// An upstream that reports more than the request can bill is charged what
// it reported, the overrun is recorded on the call, and the
// model_overrun alert fires for the deployment.
func TestChatOverrunIsChargedRecordedAndAlerted(t *testing.T) {
	liar := dep("liar", "usage:5000000:5000000")
	liar.ContextWindow, liar.MaxOutputTokens = 8192, 64
	r := newGWRig(t, rigOptions{}, liar)
	res := r.chat(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`)
	if res.status != http.StatusOK {
		t.Fatalf("call = %d %v", res.status, res.err)
	}
	cs := r.calls()
	if len(cs) != 1 {
		t.Fatalf("calls = %+v", cs)
	}
	c := cs[0]
	reported := priced(5_000_000, 5_000_000)
	if c.CostMicros != reported || c.InputTokens != 5_000_000 || c.OutputTokens != 5_000_000 {
		t.Errorf("charged %d µ for %d/%d tokens, want the reported %d µ for 5000000/5000000", c.CostMicros, c.InputTokens, c.OutputTokens, reported)
	}
	if c.ReservedMicros >= reported || c.OverrunMicros != reported-c.ReservedMicros {
		t.Errorf("reserved %d µ, overrun %d µ; want the overrun %d µ recorded", c.ReservedMicros, c.OverrunMicros, reported-c.ReservedMicros)
	}
	if b := r.budget(); b.SpentMicros != reported || b.ReservedMicros != 0 {
		t.Errorf("budget spent %d reserved %d, want the reported %d and 0", b.SpentMicros, b.ReservedMicros, reported)
	}
	rep, err := alerts.Evaluate(context.Background(), r.db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var fired *alerts.Alert
	for i, a := range rep.Fired {
		if a.Kind == alerts.ModelOverrun {
			fired = &rep.Fired[i]
		}
	}
	if fired == nil || fired.Subject != "liar" || fired.Value != 1 || fired.Runbook() == "" {
		t.Fatalf("alerts fired = %+v, want model_overrun for deployment liar with 1 call", rep.Fired)
	}
	// Once the window has passed without another, it resolves.
	rep, err = alerts.Evaluate(context.Background(), r.db, time.Now().Add(alerts.OverrunWindow+time.Minute))
	if err != nil || len(rep.Resolved) != 1 || rep.Resolved[0].Kind != alerts.ModelOverrun {
		t.Fatalf("a day later: resolved %+v, %v", rep.Resolved, err)
	}
}

// Negative counts are no usage: the call is charged its bound, nothing
// negative is stored, and the key's token bucket is never refilled by
// them.
func TestChatNegativeUsageNeverRefillsTheBucket(t *testing.T) {
	liar := dep("liar", "usage:-1000000:-1000000")
	liar.ContextWindow, liar.MaxOutputTokens = 8192, 64
	r := newGWRig(t, rigOptions{limits: models.KeyLimits{TPM: 400}}, liar)
	body := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	var statuses []int
	for range 5 {
		statuses = append(statuses, r.chat(body).status)
	}
	// Each call may use about 130 tokens (its prompt bound and the output
	// cap) and is charged all of them: the third has to wait.
	if statuses[0] != http.StatusOK || statuses[1] != http.StatusOK || statuses[len(statuses)-1] != http.StatusTooManyRequests {
		t.Fatalf("statuses = %v, want the first two answered and the key's tokens a minute exhausted after", statuses)
	}
	for _, c := range r.calls() {
		if c.InputTokens < 0 || c.OutputTokens < 0 || c.CostMicros <= 0 || c.Usage != models.UsageInvalid || c.CostMicros > c.ReservedMicros {
			t.Errorf("call with negative usage recorded as %d/%d tokens (%s), cost %d of %d reserved", c.InputTokens, c.OutputTokens, c.Usage, c.CostMicros, c.ReservedMicros)
		}
	}
}

// A deployment on loopback is refused at connect time until an admin lists
// its host; then it answers. Nothing is charged for the refused call.
func TestChatDeploymentOnLoopbackIsRefusedUntilListed(t *testing.T) {
	ctx := context.Background()
	r := newGWRig(t, rigOptions{unlisted: true}, dep("local", "fake"))
	res := r.chat(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`)
	if res.status != http.StatusServiceUnavailable || r.fake.Requests() != 0 {
		t.Fatalf("a loopback deployment, not listed = %d %v after %d upstream requests, want 503 after none", res.status, res.err, r.fake.Requests())
	}
	cs := r.calls()
	if len(cs) != 1 || len(cs[0].Attempts) != 1 || !strings.Contains(cs[0].Attempts[0].Error, "refused") || cs[0].CostMicros != 0 {
		t.Fatalf("trace = %+v", cs)
	}
	if b := r.budget(); b.SpentMicros != 0 || b.ReservedMicros != 0 {
		t.Fatalf("budget after a refused call: %+v", b)
	}
	// A bad host is refused and changes nothing.
	for _, bad := range []string{"http://127.0.0.1", "127.0.0.1:8080", "*.corp", "a/b"} {
		if _, err := models.SetAllowedHosts(ctx, r.db, testActor, []string{bad}); err == nil {
			t.Errorf("allowed host %q accepted", bad)
		}
	}
	if changed, err := models.AllowHosts(ctx, r.db, testActor, "127.0.0.1"); err != nil || !changed {
		t.Fatalf("allow = %v, %v", changed, err)
	}
	if res := r.chat(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusOK || r.fake.Requests() != 1 {
		t.Fatalf("once listed = %d %v after %d upstream requests", res.status, res.err, r.fake.Requests())
	}
	var n int
	if err := r.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events WHERE verb = 'model.allowed_hosts'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("model.allowed_hosts events = %d, %v; want 1", n, err)
	}
	// Taken off the list, it is refused again, kept connections or not.
	if _, err := models.SetAllowedHosts(ctx, r.db, testActor, nil); err != nil {
		t.Fatal(err)
	}
	if res := r.chat(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusServiceUnavailable || r.fake.Requests() != 1 {
		t.Fatalf("taken off the list = %d after %d upstream requests, want 503 after 1", res.status, r.fake.Requests())
	}
}

// A redirect is never followed, even to a host the allowed hosts list: the
// key is not sent there and its body is not relayed; the agent gets 502
// upstream_invalid.
func TestChatRedirectIsNotFollowed(t *testing.T) {
	var metaHits atomic.Int32
	var sawKey atomic.Bool
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metaHits.Add(1)
		sawKey.Store(r.Header.Get("Authorization") != "")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"instance-credentials-secret"}}]}`))
	}))
	t.Cleanup(meta.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, meta.URL+"/latest/meta-data/iam/security-credentials/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	d := dep("redirecting", "fake")
	d.BaseURL = redirector.URL + "/v1"
	r := newGWRig(t, rigOptions{}, d)
	res := r.chat(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`)
	p := problem.From(res.err)
	if res.status != http.StatusBadGateway || p.Code != "upstream_invalid" || strings.Contains(p.Message, "instance-credentials") {
		t.Fatalf("a redirecting upstream = %d %v, want 502 upstream_invalid", res.status, res.err)
	}
	if metaHits.Load() != 0 || sawKey.Load() {
		t.Fatalf("the redirect target got %d requests (key sent: %v), want none", metaHits.Load(), sawKey.Load())
	}
	if cs := r.calls(); len(cs) != 1 || !strings.Contains(cs[0].Attempts[0].Error, "redirects are not followed") || cs[0].CostMicros != 0 {
		t.Fatalf("trace = %+v", cs)
	}
}

// A 200 that is not a chat completion (or, streaming, not its events) is
// never relayed: 502 upstream_invalid, and the next deployment is asked
// when there is one.
func TestChatNonProtocolAnswerIsNotRelayed(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("html", "not-json"))
	for _, body := range []string{
		`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		res := r.chat(body)
		if p := problem.From(res.err); res.status != http.StatusBadGateway || p.Code != "upstream_invalid" || bytes.Contains(res.body, []byte("secret-token")) {
			t.Errorf("%s = %d %v %s, want 502 upstream_invalid", body, res.status, res.err, res.body)
		}
	}
	if b := r.budget(); b.SpentMicros != 0 || b.ReservedMicros != 0 {
		t.Errorf("budget after invalid answers: %+v", b)
	}
	second := dep("good", "fake")
	second.Priority = 1
	r2 := newGWRig(t, rigOptions{}, dep("html", "not-json"), second)
	if res := r2.chat(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusOK || !bytes.Contains(res.body, []byte("echo: hi")) {
		t.Errorf("with a good second deployment = %d %v %s", res.status, res.err, res.body)
	}
}

// countingDetector is a redactor detector that keeps the longest text it
// was handed to read at once. The redactor's later passes read its own
// output, where tokens (longer than the values they replaced) are; those
// are not what the gateway handed it, and are left out.
type countingDetector struct{ longest atomic.Int64 }

func (d *countingDetector) Detect(dst []redact.Match, s string) []redact.Match {
	if strings.Contains(s, "[address:") || strings.Contains(s, "[phone:") {
		return dst
	}
	for {
		old := d.longest.Load()
		if int64(len(s)) <= old || d.longest.CompareAndSwap(old, int64(len(s))) {
			return dst
		}
	}
}

// A 1 MiB prompt is cut to what is stored before it is redacted: the
// redactor reads about 8 KiB, not the megabyte, and the stored prompt is
// still the messages as JSON.
func TestChatHugePromptIsCutBeforeRedaction(t *testing.T) {
	seen := &countingDetector{}
	rd := redact.New(bytes.Repeat([]byte{9}, 32), redact.WithDetector(seen))
	r := newGWRig(t, rigOptions{redactor: rd}, dep("big", "fake"))
	prompt := strings.Repeat("I live at 14 Harbour Road, Bristol BS1 4QA, call 0117 496 0123. ", (1<<20)/64)
	body, _ := json.Marshal(map[string]any{"model": "chat", "max_tokens": 8, "messages": []any{
		map[string]string{"role": "system", "content": "be brief"}, map[string]string{"role": "user", "content": prompt}}})
	if len(body) < 1<<20 {
		t.Fatalf("the prompt is %d bytes, want 1 MiB", len(body))
	}
	if res := r.chat(string(body)); res.status != http.StatusOK {
		t.Fatalf("call = %d %v", res.status, res.err)
	}
	cs := r.calls()
	if len(cs) != 1 {
		t.Fatalf("calls = %+v", cs)
	}
	const stored = 8 << 10
	if n := len(cs[0].Prompt); n == 0 || n > stored+64 {
		t.Errorf("stored prompt is %d bytes, want at most about %d", n, stored)
	}
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal([]byte(cs[0].Prompt), &msgs); err != nil || len(msgs) != 2 || msgs[0].Role != "system" || !strings.HasSuffix(msgs[1].Content, "…") {
		t.Errorf("stored prompt is not the messages, cut: %v %d %+v …%s", err, len(msgs), msgs[0], cs[0].Prompt[max(0, len(cs[0].Prompt)-200):])
	}
	if strings.Contains(cs[0].Prompt, "Harbour Road") {
		t.Error("the stored prompt holds the address in the clear")
	}
	// The redactor was never handed more than is stored.
	if n := seen.longest.Load(); n == 0 || n > stored {
		t.Errorf("the redactor was handed %d bytes at once of a %d-byte prompt, want at most the %d stored", n, len(body), stored)
	}
}

// Hosts added at the same moment all stay listed (on PostgreSQL the
// read-then-write is serialised).
func TestAllowHostsAtOnceKeepsEveryHost(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := models.AllowHosts(ctx, db, testActor, "llm-"+string(rune('a'+i))+".corp")
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	hosts, err := models.AllowedHosts(ctx, db.Read())
	if err != nil || len(hosts) != n {
		t.Fatalf("allowed hosts = %v, %v; want all %d", hosts, err, n)
	}
}
