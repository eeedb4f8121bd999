package models_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
)

func (r *gwRig) embed(body string) chatResult {
	r.t.Helper()
	w := httptest.NewRecorder()
	err := r.g.Embeddings(context.Background(), r.caller, []byte(body), flusher{w})
	if err != nil {
		return chatResult{status: problem.From(err).Status(), err: err}
	}
	return chatResult{status: w.Code, body: w.Body.Bytes()}
}

type embeddingList struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

func testRedactor() *redact.Redactor { return redact.New(bytes.Repeat([]byte{9}, 32)) }

// An embeddings call answers the agent with the upstream's vectors under
// the alias, charges the reported prompt tokens at the input price (no
// output), within the reservation, and records the call as embeddings
// with its inputs redacted.
func TestEmbeddingsAnswerIsChargedAndRecorded(t *testing.T) {
	r := newGWRig(t, rigOptions{redactor: testRedactor()}, dep("emb", "fake"))
	res := r.embed(`{"model":"chat","input":["the first text to embed","mail jane@example.com"],"dimensions":4,"user":"u1"}`)
	if res.status != http.StatusOK {
		t.Fatalf("embeddings = %d %v", res.status, res.err)
	}
	var got embeddingList
	if err := json.Unmarshal(res.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "list" || got.Model != "chat" || len(got.Data) != 2 || got.Data[1].Index != 1 || got.Usage.PromptTokens == 0 {
		t.Fatalf("answer = %s", res.body)
	}
	var v []float64
	if err := json.Unmarshal(got.Data[0].Embedding, &v); err != nil || len(v) != 4 {
		t.Errorf("embedding = %s, want 4 floats (dimensions is forwarded)", got.Data[0].Embedding)
	}
	cs := r.calls()
	if len(cs) != 1 {
		t.Fatalf("calls = %+v", cs)
	}
	c := cs[0]
	want := priced(got.Usage.PromptTokens, 0)
	if c.Operation != models.OpEmbeddings || c.Alias != "chat" || c.Deployment != "emb" || c.Status != models.StatusOK || c.HTTPStatus != 200 {
		t.Errorf("recorded %s %s %s %s %d", c.Operation, c.Alias, c.Deployment, c.Status, c.HTTPStatus)
	}
	if c.InputTokens != got.Usage.PromptTokens || c.OutputTokens != 0 || c.Usage != models.UsageReported || c.CostMicros != want {
		t.Errorf("charged %d in %d out (%s) %d µ; the upstream reported %d prompt tokens, worth %d µ", c.InputTokens, c.OutputTokens, c.Usage,
			c.CostMicros, got.Usage.PromptTokens, want)
	}
	if c.ReservedMicros < want || c.OverrunMicros != 0 {
		t.Errorf("reserved %d µ for a call billed %d µ", c.ReservedMicros, want)
	}
	if b := r.budget(); b.SpentMicros != want || b.ReservedMicros != 0 {
		t.Errorf("budget spent %d reserved %d, want %d and 0", b.SpentMicros, b.ReservedMicros, want)
	}
	if !strings.Contains(c.Prompt, "the first text to embed") || strings.Contains(c.Prompt, "jane@example.com") {
		t.Errorf("recorded prompt %q: want the inputs, redacted", c.Prompt)
	}
	if c.Completion != "" {
		t.Errorf("the vectors were recorded: %q", c.Completion)
	}

	// base64, as the openai SDKs ask by default.
	res = r.embed(`{"model":"chat","input":"one","encoding_format":"base64"}`)
	if err := json.Unmarshal(res.body, &got); res.status != 200 || err != nil || len(got.Data) != 1 {
		t.Fatalf("base64 = %d %v %s", res.status, res.err, res.body)
	}
	var s string
	if err := json.Unmarshal(got.Data[0].Embedding, &s); err != nil {
		t.Fatalf("base64 embedding = %s", got.Data[0].Embedding)
	}
	if b, err := base64.StdEncoding.DecodeString(s); err != nil || len(b) != 8*4 {
		t.Errorf("base64 embedding decodes to %d bytes (%v), want 8 float32", len(b), err)
	}
	// Token arrays are inputs too.
	if res := r.embed(`{"model":"chat","input":[[1,2,3],[4,5]]}`); res.status != 200 {
		t.Errorf("token arrays = %d %v", res.status, res.err)
	} else if c := r.calls()[0]; c.InputTokens != 5 || strings.Contains(c.Prompt, "1,2,3") {
		t.Errorf("token arrays charged %d tokens (want 5), recorded %q", c.InputTokens, c.Prompt)
	}
}

// Without usage from the upstream the bound is charged; above the bound,
// what the upstream reported.
func TestEmbeddingsChargeTheBoundWithoutUsage(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("emb", "no-usage"))
	res := r.embed(`{"model":"chat","input":"hello"}`)
	if res.status != 200 {
		t.Fatalf("= %d %v", res.status, res.err)
	}
	c := r.calls()[0]
	if c.Usage != models.UsageEstimated || c.CostMicros != c.ReservedMicros || c.CostMicros != priced(c.InputTokens, 0) || c.InputTokens < 5 {
		t.Errorf("without usage: %d tokens (%s), %d µ of %d reserved", c.InputTokens, c.Usage, c.CostMicros, c.ReservedMicros)
	}
}

// A tenant whose budget cannot cover the worst case is refused with 402
// before anything is sent.
func TestEmbeddingsOverBudgetIs402(t *testing.T) {
	r := newGWRig(t, rigOptions{limitMicros: 100}, dep("emb", "fake"))
	res := r.embed(`{"model":"chat","input":"` + strings.Repeat("x", 200) + `"}`)
	if res.status != http.StatusPaymentRequired || problem.From(res.err).Code == "" {
		t.Fatalf("over budget = %d %v", res.status, res.err)
	}
	if !strings.Contains(res.err.Error(), "worst case") || r.fake.Requests() != 0 {
		t.Errorf("err %v, %d upstream requests", res.err, r.fake.Requests())
	}
	if b := r.budget(); b.SpentMicros != 0 || b.ReservedMicros != 0 {
		t.Errorf("budget after a refused call: %+v", b)
	}
}

// A tenant with outbound redaction sends its inputs redacted; token
// arrays, which cannot be redacted, are refused for it.
func TestEmbeddingsOutboundRedaction(t *testing.T) {
	r := newGWRig(t, rigOptions{redactor: testRedactor()}, dep("emb", "fake"))
	if _, err := models.SetTenantSettings(context.Background(), r.db, testActor, r.tenant,
		models.TenantSettings{Content: models.ContentRedacted, OutboundRedaction: true}); err != nil {
		t.Fatal(err)
	}
	if res := r.embed(`{"model":"chat","input":["write to jane@example.com"]}`); res.status != 200 {
		t.Fatalf("= %d %v", res.status, res.err)
	}
	sent := r.fake.Embedded()
	if len(sent) != 1 || strings.Contains(sent[0], "jane@example.com") || !strings.Contains(sent[0], "write to") {
		t.Errorf("sent upstream %q: want the address redacted", sent)
	}
	if c := r.calls()[0]; strings.Contains(c.Prompt, "jane@example.com") {
		t.Errorf("recorded %q", c.Prompt)
	}
	res := r.embed(`{"model":"chat","input":[1,2,3]}`)
	if p := problem.From(res.err); res.status != 400 || p.Code != "unredactable_input" || r.fake.Requests() != 1 {
		t.Errorf("token arrays for a redacting tenant = %d %v; %d upstream requests", res.status, res.err, r.fake.Requests())
	}
}

// A failing deployment falls over to the next; the record shows both
// attempts and the one that answered is charged.
func TestEmbeddingsFallOver(t *testing.T) {
	down := dep("down", "fail-500")
	up := dep("up", "fake")
	up.Priority = 1
	r := newGWRig(t, rigOptions{}, down, up)
	res := r.embed(`{"model":"chat","input":"hello"}`)
	if res.status != 200 {
		t.Fatalf("= %d %v", res.status, res.err)
	}
	c := r.calls()[0]
	if c.Deployment != "up" || len(c.Attempts) != 2 || c.Attempts[0].Status != 500 || c.Attempts[1].Deployment != "up" || c.CostMicros == 0 {
		t.Errorf("answered by %q after %+v, cost %d", c.Deployment, c.Attempts, c.CostMicros)
	}
	// A 4xx is the agent's: passed back, not retried, not charged.
	bad := dep("bad", "fail-400")
	r2 := newGWRig(t, rigOptions{}, bad, up)
	res = r2.embed(`{"model":"chat","input":"hello"}`)
	if res.status != 400 || !strings.Contains(res.err.Error(), "injected bad request") || r2.fake.Requests() != 1 {
		t.Errorf("upstream 400 = %d %v after %d requests", res.status, res.err, r2.fake.Requests())
	}
	if c := r2.calls()[0]; c.Status != models.StatusRejected || c.CostMicros != 0 || r2.budget().ReservedMicros != 0 {
		t.Errorf("refused call recorded %s, cost %d", c.Status, c.CostMicros)
	}
}

// The alias is looked up before the key's scopes: an unknown alias is
// 404 whatever the key holds, a known one without the scope 403, and a
// pattern scope allows it.
func TestEmbeddingsScopes(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("emb", "fake"))
	r.caller.Key.Scopes = []string{"model:other"}
	for _, tc := range []struct {
		name, model string
		status      int
		code        string
	}{
		{"unknown alias", "nope", 404, "model_not_found"},
		{"without the scope", "chat", 403, "model_not_allowed"},
	} {
		res := r.embed(`{"model":"` + tc.model + `","input":"hello"}`)
		if p := problem.From(res.err); res.status != tc.status || p.Code != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, res.status, res.err, tc.status, tc.code)
		}
		res = r.chat(`{"model":"` + tc.model + `","messages":[{"role":"user","content":"hi"}]}`)
		if p := problem.From(res.err); res.status != tc.status || p.Code != tc.code {
			t.Errorf("chat, %s: %d %v, want %d %s", tc.name, res.status, res.err, tc.status, tc.code)
		}
		if err := r.g.Model(context.Background(), r.caller, tc.model); problem.From(err).Code != tc.code {
			t.Errorf("Model, %s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if r.fake.Requests() != 0 || len(r.calls()) != 0 {
		t.Errorf("refused calls reached the upstream (%d) or the record", r.fake.Requests())
	}
	r.caller.Key.Scopes = []string{"model:ch*"}
	if res := r.embed(`{"model":"chat","input":"hello"}`); res.status != 200 {
		t.Errorf("with model:ch* = %d %v", res.status, res.err)
	}
	if err := r.g.Model(context.Background(), r.caller, "chat"); err != nil {
		t.Errorf("Model with model:ch* = %v", err)
	}
	if got, _ := r.g.Models(context.Background(), r.caller); len(got) != 1 || got[0] != "chat" {
		t.Errorf("Models with model:ch* = %q", got)
	}
}

// Bad requests are refused before anything is reserved or sent.
func TestEmbeddingsRefuseBadInput(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("emb", "fake"))
	for _, tc := range []struct{ body, code, want string }{
		{`{"input":"x"}`, "invalid_request", "Name the model"},
		{`{"model":"chat"}`, "invalid_request", "as \"input\""},
		{`{"model":"chat","input":""}`, "invalid_request", "empty"},
		{`{"model":"chat","input":[]}`, "invalid_request", "empty list"},
		{`{"model":"chat","input":["a",""]}`, "invalid_request", "Input 2 is empty"},
		{`{"model":"chat","input":[[]]}`, "invalid_request", "empty token array"},
		{`{"model":"chat","input":[{"text":"a"}]}`, "invalid_request", "a list of strings"},
		{`{"model":"chat","input":"a","encoding_format":"int8"}`, "invalid_request", "encoding_format"},
		{`{"model":"chat","input":"a","dimensions":0}`, "invalid_request", "dimensions"},
		{`{"model":"chat","input":"a","extra":1}`, "unsupported_field", `"extra"`},
		{`{"model":"chat","input":[` + strings.Repeat(`"a",`, models.MaxEmbeddingInputs) + `"a"]}`, "invalid_request", "at most 2048"},
	} {
		res := r.embed(tc.body)
		if p := problem.From(res.err); res.status != 400 || p.Code != tc.code || !strings.Contains(p.Message, tc.want) {
			t.Errorf("%s: %d %s %q, want 400 %s %q", clip(tc.body), res.status, p.Code, p.Message, tc.code, tc.want)
		}
	}
	if r.fake.Requests() != 0 || len(r.calls()) != 0 || r.budget().ReservedMicros != 0 {
		t.Errorf("refused requests reached the upstream (%d) or the record", r.fake.Requests())
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// A deployment that does not answer within its timeout is left for the
// next one.
func TestEmbeddingsTimeoutFallsOver(t *testing.T) {
	hang := dep("hang", "hang")
	hang.Timeout = 200 * time.Millisecond
	up := dep("up", "fake")
	up.Priority = 1
	r := newGWRig(t, rigOptions{}, hang, up)
	if res := r.embed(`{"model":"chat","input":"hello"}`); res.status != 200 {
		t.Fatalf("= %d %v", res.status, res.err)
	}
	c := r.calls()[0]
	if c.Deployment != "up" || len(c.Attempts) != 2 || !strings.HasPrefix(c.Attempts[0].Error, "timeout") {
		t.Errorf("answered by %q after %+v", c.Deployment, c.Attempts)
	}
}

// The key's model limits count embeddings calls: requests a minute here.
func TestEmbeddingsKeyLimits(t *testing.T) {
	r := newGWRig(t, rigOptions{limits: models.KeyLimits{RPM: 1}}, dep("emb", "fake"))
	if res := r.embed(`{"model":"chat","input":"hello"}`); res.status != 200 {
		t.Fatalf("first = %d %v", res.status, res.err)
	}
	res := r.embed(`{"model":"chat","input":"hello"}`)
	if p := problem.From(res.err); res.status != http.StatusTooManyRequests || p.Code != "rate_limited" || p.RetryAfter <= 0 || r.fake.Requests() != 1 {
		t.Errorf("second = %d %v (Retry-After %s), %d upstream requests", res.status, res.err, p.RetryAfter, r.fake.Requests())
	}
}
