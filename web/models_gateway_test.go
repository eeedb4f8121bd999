package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

var testActor = audit.Actor{Type: audit.ActorSystem, ID: "test"}

// A planted prompt: a name, a card, an e-mail and a street address.
const (
	plantedName    = "Margaret Whitfield"
	plantedCard    = "4111 1111 1111 1111"
	plantedEmail   = "margaret.w+planted@example.com"
	plantedAddress = "14 Harbour Road"
)

func plantedPrompt() string {
	return "I am " + plantedName + ", I live at " + plantedAddress + ", card " + plantedCard + ", mail " + plantedEmail + ". Refund me."
}

func assertNoPlanted(t *testing.T, where string, raw []byte) {
	t.Helper()
	for _, pii := range []string{plantedName, "Whitfield", plantedCard, "4111111111111111", plantedEmail, plantedAddress, "Harbour Road"} {
		if bytes.Contains(raw, []byte(pii)) {
			t.Errorf("%s holds %q", where, pii)
		}
	}
}

func TestChatOutboundRedaction(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	// Off (the default): the prompt leaves as the agent wrote it.
	if _, err := r.client.Chat.Completions.New(ctx, userChat(plantedPrompt())); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(r.sent.all(), []byte(plantedEmail)) {
		t.Fatalf("without outbound redaction the upstream did not get the prompt: %s", r.sent.all())
	}
	r.sent.bodies = nil
	if _, err := models.SetTenantSettings(ctx, r.in.DB, testActor, r.tenantRow(t), models.TenantSettings{Content: models.ContentRedacted, OutboundRedaction: true}); err != nil {
		t.Fatal(err)
	}
	got, err := r.client.Chat.Completions.New(ctx, userChat(plantedPrompt()))
	if err != nil {
		t.Fatal(err)
	}
	stream := r.client.Chat.Completions.NewStreaming(ctx, userChat(plantedPrompt()))
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	sent := r.sent.all()
	if r.fake.Requests() != 3 || !bytes.Contains(sent, []byte("[email:")) || !bytes.Contains(sent, []byte("[card:")) {
		t.Fatalf("%d upstream requests; bodies %s", r.fake.Requests(), sent)
	}
	assertNoPlanted(t, "what the upstream received", sent)
	// The agent's answer is the model's, made from the redacted prompt.
	assertNoPlanted(t, "the answer", []byte(got.Choices[0].Message.Content))
}

func TestChatContentNoneStoresMetadataOnly(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	changed, err := models.SetTenantSettings(ctx, r.in.DB, testActor, r.tenantRow(t), models.TenantSettings{Content: models.ContentNone})
	if err != nil || !changed {
		t.Fatalf("set = %v, %v", changed, err)
	}
	if _, err := r.client.Chat.Completions.New(ctx, userChat("hello metadata")); err != nil {
		t.Fatal(err)
	}
	stream := r.client.Chat.Completions.NewStreaming(ctx, userChat("hello stream"))
	for stream.Next() {
	}
	cs := r.calls(t)
	if len(cs) != 2 {
		t.Fatalf("calls = %+v", cs)
	}
	for _, c := range cs {
		if c.Prompt != "" || c.Completion != "" || c.InputTokens == 0 || c.OutputTokens == 0 || c.CostMicros == 0 || c.Status != models.StatusOK {
			t.Fatalf("call with model_content none = %+v", c)
		}
	}
	// A bad setting is refused, and nothing changes.
	if _, err := models.SetTenantSettings(ctx, r.in.DB, testActor, r.tenantRow(t), models.TenantSettings{Content: "everything"}); !isValidation(err) {
		t.Fatalf("content everything: %v", err)
	}
	if s, _ := models.TenantSettingsOf(ctx, r.in.DB.Read(), r.tenant); s.Content != models.ContentNone {
		t.Fatalf("settings after a refused change = %+v", s)
	}
}

func (r *modelRig) tenantRow(t *testing.T) tenants.Tenant {
	t.Helper()
	tn, err := tenants.BySlug(context.Background(), r.in.DB.Read(), "modelco")
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

func isValidation(err error) bool {
	var v *store.ValidationError
	return errors.As(err, &v)
}

func rawChat(t *testing.T, r *modelRig, key, body string) apiResp {
	t.Helper()
	return callAPI(t, context.Background(), http.MethodPost, r.in.URL+"/v1/chat/completions", key, []byte(body), nil)
}

func TestChatKeyRequestsPerMinute(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	k, key := newKeyIn(t, r.in, "modelco", "rpm-bot", []string{"model:chat"}, "test")
	if _, err := models.SetKeyLimits(ctx, r.in.DB, testActor, k, models.KeyLimits{RPM: 2}); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	for i := 0; i < 2; i++ {
		if res := rawChat(t, r, key, body); res.Status != http.StatusOK {
			t.Fatalf("call %d = %d %s", i+1, res.Status, res.Raw)
		}
	}
	res := rawChat(t, r, key, body)
	if res.Status != http.StatusTooManyRequests || !bytes.Contains(res.Raw, []byte(`"type":"rate_limit_error"`)) || !bytes.Contains(res.Raw, []byte(`"code":"rate_limited"`)) {
		t.Fatalf("third call = %d %s", res.Status, res.Raw)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After = %q", res.Header.Get("Retry-After"))
	}
	if r.fake.Requests() != 2 {
		t.Fatalf("upstream saw %d requests, want 2", r.fake.Requests())
	}
	// Another key of the tenant has its own limits.
	if res := rawChat(t, r, r.key, body); res.Status != http.StatusOK {
		t.Fatalf("other key = %d %s", res.Status, res.Raw)
	}
	// The OpenAI SDK reads it as a rate limit.
	c := openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	_, err := c.Chat.Completions.New(ctx, userChat("hi"))
	if e := apiErr(t, err); e.StatusCode != 429 || e.Type != "rate_limit_error" {
		t.Fatalf("SDK error = %d %q", e.StatusCode, e.Type)
	}
	if b := r.budget(t); b.ReservedMicros != 0 {
		t.Fatalf("reserved %d after refused calls", b.ReservedMicros)
	}
}

// Tokens a minute: each call is admitted on its estimate (prompt plus the
// output cap) and the estimate is corrected to the tokens used when the
// call settles.
func TestChatKeyTokensPerMinute(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	k, key := newKeyIn(t, r.in, "modelco", "tpm-bot", []string{"model:chat"}, "test")
	if _, err := models.SetKeyLimits(ctx, r.in.DB, testActor, k, models.KeyLimits{TPM: 600}); err != nil {
		t.Fatal(err)
	}
	small := `{"model":"chat","max_tokens":256,"messages":[{"role":"user","content":"hi"}]}`
	// Each estimate is about 290 tokens, each call uses about 10: without
	// the correction the third would be refused.
	for i := 0; i < 4; i++ {
		if res := rawChat(t, r, key, small); res.Status != http.StatusOK {
			t.Fatalf("call %d = %d %s", i+1, res.Status, res.Raw)
		}
	}
	big := `{"model":"chat","max_tokens":256,"messages":[{"role":"user","content":"` + strings.Repeat("long ", 200) + `"}]}`
	res := rawChat(t, r, key, big)
	if res.Status != http.StatusTooManyRequests || !bytes.Contains(res.Raw, []byte("tokens a minute")) || res.Header.Get("Retry-After") == "" {
		t.Fatalf("a call above the remaining tokens = %d %s", res.Status, res.Raw)
	}
	if r.fake.Requests() != 4 {
		t.Fatalf("upstream saw %d requests, want 4", r.fake.Requests())
	}
	// Bad limits are refused and change nothing.
	if _, err := models.SetKeyLimits(ctx, r.in.DB, testActor, k, models.KeyLimits{RPM: -1}); !isValidation(err) {
		t.Fatalf("rpm -1: %v", err)
	}
	if l, _ := models.KeyLimitsOf(ctx, r.in.DB.Read(), k.ID); l != (models.KeyLimits{TPM: 600}) {
		t.Fatalf("limits after a refused change = %+v", l)
	}
}

// A stream that stops sending after its first bytes is cut after the
// deployment's timeout without an event, and charged for what arrived.
func TestChatStalledStreamIsCut(t *testing.T) {
	d := deployment("first", "stall", 0)
	d.Timeout = 300 * time.Millisecond
	r := newModelRig(t, 1_000_000, d, deployment("second", "fake", 1))
	// The bound only keeps a broken gateway from hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream := r.client.Chat.Completions.NewStreaming(ctx, userChat("a b c d e f g h"))
	var text strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the stalled stream was not cut by Warden")
	}
	// The client raises: a cut answer never looks finished.
	var streamErr *ssestream.StreamError
	if err := stream.Err(); !errors.As(err, &streamErr) || !strings.Contains(err.Error(), "upstream_stalled") {
		t.Fatalf("the stream ended with %v, want the upstream_stalled error", err)
	}
	if text.Len() == 0 || !strings.HasPrefix("echo: a b c d e f g h", text.String()) || text.String() == "echo: a b c d e f g h" {
		t.Fatalf("got %q, want the start of the answer", text.String())
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Status != models.StatusCut || cs[0].Deployment != "first" || len(cs[0].Attempts) != 1 ||
		!strings.HasPrefix(cs[0].Attempts[0].Error, "stalled") || cs[0].CostMicros <= 0 || cs[0].CostMicros > cs[0].ReservedMicros ||
		cs[0].Attempts[0].CostMicros != cs[0].CostMicros {
		t.Fatalf("trace = %+v", cs)
	}
	if b := r.budget(t); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d reserved %d, want %d and 0", b.SpentMicros, b.ReservedMicros, cs[0].CostMicros)
	}
	if r.fake.Requests() != 1 {
		t.Fatalf("a started stream was restarted: %d upstream requests", r.fake.Requests())
	}
}

// Weights spread an alias's calls among deployments of equal priority.
func TestChatWeightsSpreadLoad(t *testing.T) {
	light, heavy := deployment("a-light", "fake", 0), deployment("b-heavy", "fake", 0)
	light.Weight, heavy.Weight = 1, 3
	r := newModelRig(t, 1<<40, light, heavy)
	const n = 200
	for i := 0; i < n; i++ {
		if res := rawChat(t, r, r.key, `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`); res.Status != http.StatusOK {
			t.Fatalf("call %d = %d %s", i, res.Status, res.Raw)
		}
	}
	counts := map[string]int{}
	for _, c := range r.calls(t) {
		counts[c.Deployment]++
	}
	// Expected 150 of 200 on the heavy one; 120–180 is five standard
	// deviations either side.
	if counts["b-heavy"] < 120 || counts["b-heavy"] > 180 || counts["a-light"]+counts["b-heavy"] != n {
		t.Fatalf("calls per deployment = %v, want about 3:1", counts)
	}
}

const schemaFormat = `"response_format":{"type":"json_schema","json_schema":{"name":"echo","strict":true,"schema":{"type":"object","required":["echo"],"properties":{"echo":{"type":"string"}},"additionalProperties":false}}}`

func TestChatCascade(t *testing.T) {
	tests := []struct {
		name, cheap, body string
		escalates         bool
		why               string
	}{
		{"schema failure escalates", "off-schema", `{"model":"chat",` + schemaFormat + `,"messages":[{"role":"user","content":"hi"}]}`, true, "check failed: answer does not match the response_format schema"},
		{"empty answer escalates", "empty", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, true, "check failed: empty answer"},
		{"refusal escalates", "refuse", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, true, "check failed: refused"},
		{"valid answer does not", "fake", `{"model":"chat",` + schemaFormat + `,"messages":[{"role":"user","content":"hi"}]}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The dear one has the better priority; the cascade asks the
			// cheap one first all the same.
			dear, cheap := deployment("dear", "fake", 0), deployment("cheap", tt.cheap, 1)
			dear.InputMicrosPerM, dear.OutputMicrosPerM = 10_000_000, 30_000_000
			r := newModelRig(t, 1_000_000, dear, cheap)
			if _, err := models.SetAliasSettings(context.Background(), r.in.DB, testActor, models.AliasSettings{Alias: "chat", Cascade: true}); err != nil {
				t.Fatal(err)
			}
			res := rawChat(t, r, r.key, tt.body)
			if res.Status != http.StatusOK {
				t.Fatalf("= %d %s", res.Status, res.Raw)
			}
			cs := r.calls(t)
			if len(cs) != 1 || cs[0].Attempts[0].Deployment != "cheap" || cs[0].Attempts[0].CostMicros <= 0 {
				t.Fatalf("trace = %+v", cs)
			}
			c := cs[0]
			if !tt.escalates {
				if len(c.Attempts) != 1 || c.Deployment != "cheap" || r.fake.Requests() != 1 || c.CostMicros != c.Attempts[0].CostMicros {
					t.Fatalf("a valid answer escalated: %+v", c)
				}
				return
			}
			if len(c.Attempts) != 2 || c.Attempts[0].Error != tt.why || c.Attempts[1].Deployment != "dear" || c.Deployment != "dear" ||
				c.CostMicros != c.Attempts[0].CostMicros+c.Attempts[1].CostMicros || !bytes.Contains(res.Raw, []byte(`{\"echo\":\"hi\"}`)) && !bytes.Contains(res.Raw, []byte(`echo: hi`)) {
				t.Fatalf("escalation: %+v; answer %s", c, res.Raw)
			}
			if b := r.budget(t); b.SpentMicros != c.CostMicros || b.ReservedMicros != 0 {
				t.Fatalf("budget spent %d reserved %d, want both attempts (%d)", b.SpentMicros, b.ReservedMicros, c.CostMicros)
			}
		})
	}
}

// A stream is never cascaded: deployments are tried in priority order.
func TestChatCascadeSkipsStreams(t *testing.T) {
	dear, cheap := deployment("dear", "fake", 0), deployment("cheap", "empty", 1)
	dear.InputMicrosPerM = 10_000_000
	r := newModelRig(t, 1_000_000, dear, cheap)
	if _, err := models.SetAliasSettings(context.Background(), r.in.DB, testActor, models.AliasSettings{Alias: "chat", Cascade: true}); err != nil {
		t.Fatal(err)
	}
	stream := r.client.Chat.Completions.NewStreaming(context.Background(), userChat("hi"))
	for stream.Next() {
	}
	if cs := r.calls(t); len(cs) != 1 || cs[0].Deployment != "dear" || len(cs[0].Attempts) != 1 {
		t.Fatalf("trace = %+v", cs)
	}
}

func TestChatCache(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	if _, err := models.SetAliasSettings(ctx, r.in.DB, testActor, models.AliasSettings{Alias: "chat", CacheTTL: 600}); err != nil {
		t.Fatal(err)
	}
	det := `{"model":"chat","temperature":0,"user":"u1","messages":[{"role":"user","content":"cache me"}]}`
	first := rawChat(t, r, r.key, det)
	spent := r.budget(t).SpentMicros
	// The same request, members reordered and another user: a hit.
	second := rawChat(t, r, r.key, `{"messages":[{"content":"cache me","role":"user"}],"user":"u2","temperature":0.0,"model":"chat"}`)
	if first.Status != 200 || second.Status != 200 || second.Header.Get("X-Warden-Cache") != "hit" || first.Header.Get("X-Warden-Cache") != "" {
		t.Fatalf("first %d %q, second %d %q", first.Status, first.Header.Get("X-Warden-Cache"), second.Status, second.Header.Get("X-Warden-Cache"))
	}
	if !bytes.Contains(second.Raw, []byte("echo: cache me")) || r.fake.Requests() != 1 {
		t.Fatalf("hit = %s after %d upstream requests", second.Raw, r.fake.Requests())
	}
	if b := r.budget(t); b.SpentMicros != spent || b.ReservedMicros != 0 {
		t.Fatalf("a hit was charged: spent %d, was %d", b.SpentMicros, spent)
	}
	cs := r.calls(t)
	if len(cs) != 2 || !cs[0].CacheHit || cs[0].CostMicros != 0 || cs[0].Status != models.StatusOK || cs[1].CacheHit {
		t.Fatalf("trace = %+v", cs)
	}
	// Another tenant never gets this tenant's entry.
	_, other := newKeyIn(t, r.in, "acme", "acme-chat", []string{"model:chat"}, "test")
	if res := rawChat(t, r, other, det); res.Status != 200 || res.Header.Get("X-Warden-Cache") == "hit" || r.fake.Requests() != 2 {
		t.Fatalf("other tenant = %d %q after %d upstream requests", res.Status, res.Header.Get("X-Warden-Cache"), r.fake.Requests())
	}
	// Not deterministic (no temperature 0, or a stream): never cached.
	for i, body := range []string{
		`{"model":"chat","messages":[{"role":"user","content":"cache me"}]}`,
		`{"model":"chat","temperature":0.7,"messages":[{"role":"user","content":"cache me"}]}`,
		`{"model":"chat","temperature":0,"stream":true,"messages":[{"role":"user","content":"cache me"}]}`,
	} {
		if res := rawChat(t, r, r.key, body); res.Status != 200 || res.Header.Get("X-Warden-Cache") == "hit" || r.fake.Requests() != int64(3+i) {
			t.Fatalf("%s = %d %q after %d upstream requests", body, res.Status, res.Header.Get("X-Warden-Cache"), r.fake.Requests())
		}
	}
}

// An upstream answer that is not OpenAI's chat protocol (an HTML page, as
// a metadata service or a login wall would send) is never passed on: the
// agent gets 502 upstream_invalid in OpenAI's error shape, whole or
// streamed, and is charged nothing.
func TestChatNonProtocolAnswerIs502(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("html", "not-json", 0))
	for _, body := range []string{
		`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		res := rawChat(t, r, r.key, body)
		if res.Status != http.StatusBadGateway || !bytes.Contains(res.Raw, []byte(`"code":"upstream_invalid"`)) || !bytes.Contains(res.Raw, []byte(`"type":"server_error"`)) ||
			bytes.Contains(res.Raw, []byte("secret-token")) {
			t.Errorf("%s = %d %s, want 502 upstream_invalid in OpenAI's shape", body, res.Status, res.Raw)
		}
	}
	_, err := r.client.Chat.Completions.New(context.Background(), userChat("hi"))
	if e := apiErr(t, err); e.StatusCode != http.StatusBadGateway || e.Code != "upstream_invalid" {
		t.Errorf("through the SDK: %d %q", e.StatusCode, e.Code)
	}
	if b := r.budget(t); b.SpentMicros != 0 || b.ReservedMicros != 0 {
		t.Errorf("budget after invalid answers: spent %d reserved %d", b.SpentMicros, b.ReservedMicros)
	}
}

// A prompt of nearly 1 MB (the API's body limit) of addresses through
// /v1/chat/completions: the
// call completes and what is stored is cut to 8 KiB (the redactor is
// handed no more; models.TestChatHugePromptIsCutBeforeRedaction counts
// what it reads).
func TestChatHugePromptIsStoredBounded(t *testing.T) {
	r := newModelRig(t, 1_000_000_000, deployment("fake-a", "fake", 0))
	prompt := strings.Repeat("14 Harbour Road, Bristol BS1 4QA. ", 990_000/34)
	body, _ := json.Marshal(map[string]any{"model": "chat", "max_tokens": 8, "messages": []any{map[string]string{"role": "user", "content": prompt}}})
	if res := rawChat(t, r, r.key, string(body)); res.Status != http.StatusOK {
		t.Fatalf("a %d-byte prompt = %d %.300s", len(body), res.Status, res.Raw)
	}
	cs := r.calls(t)
	if len(cs) != 1 || len(cs[0].Prompt) > 8<<10+64 || len(cs[0].Prompt) == 0 || strings.Contains(cs[0].Prompt, "Harbour Road") {
		t.Fatalf("stored prompt: %d bytes, %+v", len(cs[0].Prompt), cs)
	}
}
