package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/models"
)

// The openai SDK embeds through Warden with one base URL and one key:
// vectors under the alias, usage, the call recorded and charged.
func TestEmbeddingsThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("emb-a", "fake", 0))
	ctx := context.Background()
	res, err := r.client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "chat",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"refund order 42", "where is my parcel"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "chat" || len(res.Data) != 2 || len(res.Data[1].Embedding) != 8 || res.Usage.PromptTokens == 0 {
		t.Fatalf("answer: model %q, %d vectors, usage %+v", res.Model, len(res.Data), res.Usage)
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Operation != models.OpEmbeddings || cs[0].InputTokens != res.Usage.PromptTokens || cs[0].CostMicros == 0 {
		t.Fatalf("calls = %+v", cs)
	}
	if b := r.budget(t); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 {
		t.Errorf("budget %+v, want %d spent", b, cs[0].CostMicros)
	}

	// A key without the scope: 403 for an alias that exists, 404 for one
	// that does not (whatever the key holds), in OpenAI's shape.
	other := openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey(r.in.DemoKey), option.WithMaxRetries(0))
	_, err = other.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "chat", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	if e := apiErr(t, err); e.StatusCode != 403 || e.Type != "permission_error" || e.Code != "model_not_allowed" {
		t.Errorf("without the scope: %d %s %s", e.StatusCode, e.Type, e.Code)
	}
	_, err = other.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "no-such-model", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if e := apiErr(t, err); e.StatusCode != 404 || e.Type != "invalid_request_error" || e.Code != "model_not_found" {
		t.Errorf("unknown alias for a key without its scope: %d %s %s", e.StatusCode, e.Type, e.Code)
	}
	if r.fake.Requests() != 1 {
		t.Errorf("refused calls reached the upstream: %d requests", r.fake.Requests())
	}
}

// GET /v1/models/{id}: the model object for an alias the key may use;
// 404 model_not_found for one Warden does not serve.
func TestGetModelThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("chat-a", "fake", 0))
	ctx := context.Background()
	m, err := r.client.Models.Get(ctx, "chat")
	if err != nil || m.ID != "chat" || m.Object != "model" || m.OwnedBy != "warden" {
		t.Fatalf("Get(chat) = %+v, %v", m, err)
	}
	_, err = r.client.Models.Get(ctx, "nope")
	if e := apiErr(t, err); e.StatusCode != 404 || e.Type != "invalid_request_error" || e.Code != "model_not_found" {
		t.Errorf("Get(nope) = %d %s %s", e.StatusCode, e.Type, e.Code)
	}
	other := openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey(r.in.DemoKey), option.WithMaxRetries(0))
	_, err = other.Models.Get(ctx, "chat")
	if e := apiErr(t, err); e.StatusCode != 403 || e.Code != "model_not_allowed" {
		t.Errorf("Get(chat) without the scope = %d %s", e.StatusCode, e.Code)
	}
	// A pattern scope: the list shows every alias it matches.
	_, wild := newKeyIn(t, r.in, "modelco", "wild-bot", []string{"model:ch*"}, "test")
	wc := openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey(wild), option.WithMaxRetries(0))
	page, err := wc.Models.List(ctx)
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "chat" {
		t.Fatalf("List with model:ch* = %+v, %v", page, err)
	}
	if _, err := wc.Chat.Completions.New(ctx, userChat("hi")); err != nil {
		t.Errorf("chat with model:ch* = %v", err)
	}
}

// A route Warden does not serve under /v1/ answers in OpenAI's shape and
// names the routes it serves; Warden's own API keeps its shape.
func TestUnservedV1RoutesInOpenAIShape(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("chat-a", "fake", 0))
	for _, tc := range []struct {
		method, path string
		status       int
		openAI       bool
	}{
		{http.MethodGet, "/v1/chat/completions", 405, true},
		{http.MethodGet, "/v1/embeddings", 405, true},
		{http.MethodPost, "/v1/completions", 404, true},
		{http.MethodGet, "/v1/foo", 404, true},
		{http.MethodDelete, "/v1/models/chat", 405, true},
		{http.MethodGet, "/v1/journeys", 405, false},
		{http.MethodPost, "/v1/actions/a1/nowhere", 404, false},
	} {
		res := callAPI(t, context.Background(), tc.method, r.in.URL+tc.path, r.key, []byte(`{}`), nil)
		var body struct {
			Error map[string]any `json:"error"`
		}
		_ = json.Unmarshal(res.Raw, &body)
		msg, _ := body.Error["message"].(string)
		// Every /v1 error has OpenAI's type; only the OpenAI routes' say
		// what is served.
		if res.Status != tc.status || body.Error["code"] == nil || body.Error["type"] != "invalid_request_error" || strings.Contains(msg, handlers.ServedRoutes) != tc.openAI {
			t.Errorf("%s %s = %d %s", tc.method, tc.path, res.Status, res.Raw)
			continue
		}
		if tc.openAI && (body.Error["type"] != "invalid_request_error" || !strings.Contains(msg, handlers.ServedRoutes) || !strings.Contains(msg, tc.path)) {
			t.Errorf("%s %s: %s", tc.method, tc.path, res.Raw)
		}
	}
}
