package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// modelRig is a Warden with model deployments in front of a fake upstream.
type modelRig struct {
	in     *instance
	fake   *fakeupstream.Server
	key    string
	client openai.Client
	tenant string
	sent   *bodyRecorder // what reached the fake upstream
}

// bodyRecorder keeps every request body, and its headers, that reaches
// the fake upstream.
type bodyRecorder struct {
	next    http.Handler
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.bodies = append(b.bodies, raw)
	b.headers = append(b.headers, r.Header.Clone())
	b.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(raw))
	b.next.ServeHTTP(w, r)
}

func (b *bodyRecorder) all() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Join(b.bodies, []byte("\n"))
}

// deployment is a deployment of alias "chat" at the fake upstream whose
// upstream model id picks the fake's behaviour.
func deployment(name, upstream string, priority int) models.Deployment {
	return models.Deployment{Name: name, Alias: "chat", Priority: priority, UpstreamModel: upstream,
		InputMicrosPerM: 1_000_000, OutputMicrosPerM: 2_000_000, ContextWindow: 8192, MaxOutputTokens: 256,
		Timeout: 2 * time.Second, Concurrency: 500, Enabled: true}
}

func newModelRig(t testing.TB, limitMicros int64, deps ...models.Deployment) *modelRig {
	t.Helper()
	return newModelRigEnv(t, nil, limitMicros, deps...)
}

// newModelRigEnv is newModelRig with settings. The fake upstream listens
// on loopback, as the demo's does: the demo lists 127.0.0.1 in the
// allowed hosts.
func newModelRigEnv(t testing.TB, env map[string]string, limitMicros int64, deps ...models.Deployment) *modelRig {
	t.Helper()
	in := startWardenDemo(t, env)
	fake := fakeupstream.New()
	sent := &bodyRecorder{next: fake}
	up := httptest.NewServer(sent)
	t.Cleanup(up.Close)
	ctx := context.Background()
	for _, d := range deps {
		d.BaseURL = up.URL + "/v1"
		if _, err := models.Create(ctx, in.DB, in.Agent.Journeys.Sealer(), audit.Actor{Type: audit.ActorSystem, ID: "test"}, d, "sk-upstream-secret"); err != nil {
			t.Fatal(err)
		}
	}
	// A tenant of its own: the demo's journeys spend acme's budget.
	var tenant tenants.Tenant
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if tenant, err = tenants.Insert(ctx, tx, "modelco", "Model Co"); err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Month, LimitMicros: limitMicros, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	_, key := newKeyIn(t, in, "modelco", "chat-bot", []string{"model:chat"}, "test")
	return &modelRig{in: in, fake: fake, key: key, tenant: tenant.ID, sent: sent,
		client: openai.NewClient(option.WithBaseURL(in.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))}
}

func (r *modelRig) budget(t testing.TB) budgets.Budget {
	t.Helper()
	b, err := budgets.Get(context.Background(), r.in.DB.Read(), r.tenant)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (r *modelRig) calls(t testing.TB) []models.Call {
	t.Helper()
	cs, err := models.Calls(context.Background(), r.in.DB.Read(), nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func userChat(text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: "chat", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}}
}

func TestChatCompletionThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	got, err := r.client.Chat.Completions.New(ctx, userChat("hello there"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != "echo: hello there" || got.Model != "chat" || got.Usage.CompletionTokens != 3 {
		t.Fatalf("completion = %q model %q usage %+v", got.Choices[0].Message.Content, got.Model, got.Usage)
	}
	list, err := r.client.Models.List(ctx)
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != "chat" {
		t.Fatalf("models = %+v, %v", list, err)
	}
	b := r.budget(t)
	want := (got.Usage.PromptTokens*1_000_000+999_999)/1_000_000 + (got.Usage.CompletionTokens*2_000_000+999_999)/1_000_000
	if b.SpentMicros != want || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d reserved %d, want spent %d reserved 0", b.SpentMicros, b.ReservedMicros, want)
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Status != models.StatusOK || cs[0].Deployment != "fake-a" || cs[0].CostMicros != want || cs[0].InputTokens != got.Usage.PromptTokens {
		t.Fatalf("calls = %+v", cs)
	}
}

func TestChatStreamThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	stream := r.client.Chat.Completions.NewStreaming(context.Background(), userChat("one two three four"))
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		// Every chunk names the alias asked for, as a whole answer does,
		// not the upstream's model id ("fake").
		if m := stream.Current().Model; m != "chat" {
			t.Errorf("chunk %d names model %q, want the alias chat", chunks, m)
		}
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != "echo: one two three four" || acc.Usage.CompletionTokens != 5 || chunks < 6 {
		t.Fatalf("stream = %q usage %+v in %d chunks", acc.Choices[0].Message.Content, acc.Usage, chunks)
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Status != models.StatusOK || !cs[0].Stream || cs[0].OutputTokens != 5 || cs[0].CostMicros == 0 {
		t.Fatalf("calls = %+v", cs)
	}
	if b := r.budget(t); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d reserved %d, want %d and 0", b.SpentMicros, b.ReservedMicros, cs[0].CostMicros)
	}
}

func TestChatToolCallRoundTrip(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	p := userChat("weather in Oslo")
	p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}})}
	got, err := r.client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	calls := got.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"query":"weather in Oslo"}` || got.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("tool calls = %+v", got.Choices[0])
	}
	p.Messages = append(p.Messages, got.Choices[0].Message.ToParam(), openai.ToolMessage("12 degrees", calls[0].ID))
	got, err = r.client.Chat.Completions.New(ctx, p)
	if err != nil || got.Choices[0].Message.Content != "tool said: 12 degrees" {
		t.Fatalf("after the tool result: %+v, %v", got, err)
	}
	// response_format passes through.
	q := userChat("hi")
	q.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &openai.ResponseFormatJSONObjectParam{}}
	got, err = r.client.Chat.Completions.New(ctx, q)
	if err != nil || got.Choices[0].Message.Content != `{"echo":"hi"}` {
		t.Fatalf("json mode: %+v, %v", got, err)
	}
}

func apiErr(t *testing.T, err error) *openai.Error {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *openai.Error", err)
	}
	return e
}

func TestChatErrorsInOpenAIShape(t *testing.T) {
	r := newModelRig(t, 100, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	tests := []struct {
		name   string
		client openai.Client
		params openai.ChatCompletionNewParams
		status int
		typ    string
		code   string
	}{
		{"bad key", openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey("wk_nope"), option.WithMaxRetries(0)), userChat("hi"), 401, "authentication_error", "unauthorized"},
		{"no scope", openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey(r.in.DemoKey), option.WithMaxRetries(0)), userChat("hi"), 403, "permission_error", "model_not_allowed"},
		{"budget", r.client, userChat(strings.Repeat("long prompt ", 100)), 402, "insufficient_quota", "budget_exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.client.Chat.Completions.New(ctx, tt.params)
			e := apiErr(t, err)
			if e.StatusCode != tt.status || e.Type != tt.typ || e.Code != tt.code || e.Message == "" {
				t.Fatalf("error = %d %q %q %q, want %d %q %q", e.StatusCode, e.Type, e.Code, e.Message, tt.status, tt.typ, tt.code)
			}
		})
	}
	if r.fake.Requests() != 0 {
		t.Fatalf("the upstream was called %d times for refused calls", r.fake.Requests())
	}
}

func TestChatRateLimitedAndUnavailable(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("only", "fail-429", 0))
	resp := callAPI(t, context.Background(), http.MethodPost, r.in.URL+"/v1/chat/completions", r.key, []byte(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`), nil)
	if resp.Status != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !bytes.Contains(resp.Raw, []byte(`"type":"server_error"`)) {
		t.Fatalf("all deployments 429 = %d %s (Retry-After %q)", resp.Status, resp.Raw, resp.Header.Get("Retry-After"))
	}
	if b := r.budget(t); b.SpentMicros != 0 || b.ReservedMicros != 0 {
		t.Fatalf("budget after a failed call: spent %d reserved %d", b.SpentMicros, b.ReservedMicros)
	}
}

// 200 calls at once against a budget that covers some of their worst
// cases: the admitted ones are paid for, the rest get 402, and the budget
// is never exceeded.
func TestChatConcurrentCallsNeverOverspend(t *testing.T) {
	const limit = 1_500
	// All 200 are admitted to the gateway: the API's load shedding (which
	// counts chat calls) is not what this test is about.
	r := newModelRigEnv(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "1000"}, limit, deployment("fake-a", "fake", 0))
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := userChat("spend please")
			p.MaxTokens = openai.Int(100)
			_, err := r.client.Chat.Completions.New(context.Background(), p)
			status := 200
			if err != nil {
				var e *openai.Error
				if !errors.As(err, &e) {
					t.Error(err)
					return
				}
				status = e.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	b := r.budget(t)
	if statuses[200]+statuses[402] != 200 || statuses[200] == 0 || statuses[402] == 0 {
		t.Fatalf("statuses = %v, want only 200 and 402, some of each", statuses)
	}
	if b.SpentMicros > limit || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d of %d, reserved %d", b.SpentMicros, limit, b.ReservedMicros)
	}
	var sum int64
	for _, c := range r.calls(t) {
		sum += c.CostMicros
	}
	if sum != b.SpentMicros || int(r.fake.Requests()) != statuses[200] {
		t.Fatalf("calls cost %d, budget spent %d; upstream saw %d requests for %d answers", sum, b.SpentMicros, r.fake.Requests(), statuses[200])
	}
	t.Logf("statuses %v, spent %d of %d", statuses, b.SpentMicros, limit)
}

func TestChatFallsOverOnTransientFailure(t *testing.T) {
	for first, why := range map[string]string{"fail-500": "upstream 500", "hang": "timeout after 300ms", "fail-429": "upstream 429"} {
		t.Run(first, func(t *testing.T) {
			bad := deployment("first", first, 0)
			bad.Timeout = 300 * time.Millisecond
			r := newModelRig(t, 1_000_000, bad, deployment("second", "fake", 1))
			got, err := r.client.Chat.Completions.New(context.Background(), userChat("are you there"))
			if err != nil || got.Choices[0].Message.Content != "echo: are you there" {
				t.Fatalf("completion = %+v, %v", got, err)
			}
			cs := r.calls(t)
			if len(cs) != 1 || cs[0].Deployment != "second" || len(cs[0].Attempts) != 2 || cs[0].Attempts[0].Deployment != "first" ||
				cs[0].Attempts[0].Error != why || cs[0].Attempts[1].Deployment != "second" || cs[0].Attempts[1].Status != 200 {
				t.Fatalf("trace = %+v", cs)
			}
		})
	}
}

func TestChatBadRequestIsNotRetried(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("first", "fail-400", 0), deployment("second", "fake", 1))
	_, err := r.client.Chat.Completions.New(context.Background(), userChat("hi"))
	e := apiErr(t, err)
	if e.StatusCode != 400 || e.Message != "injected bad request" || r.fake.Requests() != 1 {
		t.Fatalf("error %d %q after %d upstream requests, want 400 after 1", e.StatusCode, e.Message, r.fake.Requests())
	}
	if cs := r.calls(t); len(cs) != 1 || len(cs[0].Attempts) != 1 || cs[0].Status != models.StatusRejected || cs[0].CostMicros != 0 {
		t.Fatalf("trace = %+v", cs)
	}
}

// A stream that breaks after its first bytes reached the agent is not
// restarted on another deployment (the agent would see text twice); what
// was used is charged, within the reservation.
func TestChatStartedStreamIsNeverRestarted(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("first", "cut", 0), deployment("second", "fake", 1))
	stream := r.client.Chat.Completions.NewStreaming(context.Background(), userChat("a b c d e f g h"))
	var text strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	if r.fake.Requests() != 1 || !strings.HasPrefix("echo: a b c d e f g h", text.String()) || text.String() == "echo: a b c d e f g h" {
		t.Fatalf("got %q after %d upstream requests, want part of the answer after 1", text.String(), r.fake.Requests())
	}
	// The client raises: a cut answer never looks finished.
	var streamErr *ssestream.StreamError
	if err := stream.Err(); !errors.As(err, &streamErr) || !strings.Contains(err.Error(), "upstream_cut") {
		t.Fatalf("the stream ended with %v, want the upstream_cut error", err)
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Status != models.StatusCut || cs[0].Deployment != "first" || cs[0].CostMicros <= 0 || cs[0].CostMicros > cs[0].ReservedMicros {
		t.Fatalf("trace = %+v", cs)
	}
	if b := r.budget(t); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d reserved %d", b.SpentMicros, b.ReservedMicros)
	}
}

func TestChatPIINeverStored(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	const email, card = "jane.doe+planted@example.com", "4111 1111 1111 1111"
	ctx := context.Background()
	if _, err := r.client.Chat.Completions.New(ctx, userChat("refund "+email+" card "+card)); err != nil {
		t.Fatal(err)
	}
	stream := r.client.Chat.Completions.NewStreaming(ctx, userChat("stream to "+email))
	for stream.Next() {
	}
	cs := r.calls(t)
	if len(cs) != 2 || !strings.Contains(cs[0].Prompt+cs[1].Prompt, "[email:") || cs[0].Completion == "" {
		t.Fatalf("traces = %+v", cs)
	}
	r.in.Stop(t)
	if r.in.DB.Dialect() == store.Postgres {
		// No file to read: every cell of every table instead.
		forms := map[string][]string{"email": {email}, "card": {card, "4111111111111111"}, "upstream key": {"sk-upstream-secret"}}
		for _, hit := range findPlanted(t, r.in.DB.Read(), forms) {
			t.Error(hit)
		}
		return
	}
	for _, f := range []string{"warden.db", "warden.db-wal"} {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(r.in.DB.Path()), f))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, pii := range []string{email, card, "4111111111111111", "sk-upstream-secret"} {
			if bytes.Contains(raw, []byte(pii)) {
				t.Errorf("%s holds %q", f, pii)
			}
		}
	}
}

// BenchmarkChatGatewayOverhead compares a completion through Warden with
// the same completion straight from the fake upstream, and reports the
// p50 and p99 of each.
func BenchmarkChatGatewayOverhead(b *testing.B) {
	r := newModelRig(b, 1<<60, deployment("fake-a", "fake", 0))
	up := httptest.NewServer(fakeupstream.New())
	defer up.Close()
	direct := openai.NewClient(option.WithBaseURL(up.URL+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	ctx := context.Background()
	measure := func(c openai.Client, model string) []time.Duration {
		var ds []time.Duration
		for i := 0; i < b.N; i++ {
			p := userChat("benchmark me please")
			p.Model = model
			t0 := time.Now()
			if _, err := c.Chat.Completions.New(ctx, p); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		return ds
	}
	pct := func(ds []time.Duration, p float64) float64 {
		return float64(ds[min(len(ds)-1, int(float64(len(ds))*p))].Microseconds())
	}
	b.ResetTimer()
	d := measure(direct, "fake")
	w := measure(r.client, "chat")
	b.ReportMetric(pct(d, 0.5), "direct-p50-µs")
	b.ReportMetric(pct(d, 0.99), "direct-p99-µs")
	b.ReportMetric(pct(w, 0.5), "warden-p50-µs")
	b.ReportMetric(pct(w, 0.99), "warden-p99-µs")
}

// The development demo has a model: its key reaches demo-model, a fake
// upstream inside the process.
func TestDemoKeyReachesDemoModel(t *testing.T) {
	in := startWardenDemo(t, nil)
	c := openai.NewClient(option.WithBaseURL(in.URL+"/v1/"), option.WithAPIKey(in.DemoKey), option.WithMaxRetries(0))
	p := userChat("hello demo")
	p.Model = "demo-model"
	got, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil || got.Choices[0].Message.Content != "echo: hello demo" || got.Model != "demo-model" {
		t.Fatalf("demo model = %+v, %v", got, err)
	}
}

// Errors raised before the chat handler runs (a body over 1 MiB, a wrong
// method) are in OpenAI's shape too, with a type OpenAI's SDKs read.
func TestChatEarlyErrorsInOpenAIShape(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	big := `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<20) + `"}]}`
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		typ                      string
	}{
		{"too large", http.MethodPost, "/v1/chat/completions", big, http.StatusRequestEntityTooLarge, "invalid_request_error"},
		{"wrong method", http.MethodGet, "/v1/chat/completions", "", http.StatusMethodNotAllowed, "invalid_request_error"},
		{"wrong method on models", http.MethodPost, "/v1/models", "{}", http.StatusMethodNotAllowed, "invalid_request_error"},
		// An empty conversation is Warden's to refuse, not the upstream's
		// (it came back as 502-ish upstream_rejected).
		{"no messages", http.MethodPost, "/v1/chat/completions", `{"model":"chat","messages":[ ]}`, http.StatusBadRequest, "invalid_request_error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, r.in.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+r.key)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct {
				Error struct{ Message, Type, Code string } `json:"error"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if tt.name == "no messages" && body.Error.Code != "invalid_request" {
				t.Errorf("no messages: code %q, want invalid_request", body.Error.Code)
			}
			if res.StatusCode != tt.status || body.Error.Type != tt.typ || body.Error.Code == "" || body.Error.Message == "" {
				t.Fatalf("%s %s = %d %+v, want %d with type %q", tt.method, tt.path, res.StatusCode, body.Error, tt.status, tt.typ)
			}
		})
	}
}
