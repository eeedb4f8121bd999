package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/identity"
)

// otlpReceiver is an OTLP/HTTP collector on loopback: it accepts POST
// /v1/traces in protobuf, as Jaeger, Tempo or Langfuse do, and keeps
// each export's raw body and its spans.
type otlpReceiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	bodies   [][]byte
	spans    []*tracepb.Span
	resource []*commonpb.KeyValue
	scopes   []string // the instrumentation scope of each exported scope's spans
	headers  []http.Header
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("collector got %s %s (%s)", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "not OTLP/HTTP protobuf", http.StatusNotFound)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var export collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &export); err != nil {
			t.Errorf("export is not an ExportTraceServiceRequest: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, raw)
		r.headers = append(r.headers, req.Header.Clone())
		for _, rs := range export.ResourceSpans {
			r.resource = rs.GetResource().GetAttributes()
			for _, ss := range rs.ScopeSpans {
				r.scopes = append(r.scopes, ss.GetScope().GetName())
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// named returns the spans called name.
func (r *otlpReceiver) named(name string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func (r *otlpReceiver) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.spans {
		out = append(out, s.Name)
	}
	return out
}

// attr is the value of a span attribute as text ("" when absent).
func attr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			if v.BoolValue {
				return "true"
			}
			return "false"
		}
		return kv.Value.String()
	}
	return ""
}

// The agent's trace: one trace id, a span of its own for each request.
const (
	agentTrace       = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentChatSpan    = "00f067aa0ba902b7"
	agentJourneySpan = "a1b2c3d4e5f60718"
	agentWaitSpan    = "1122334455667788"
	agentEmbedSpan   = "99aabbccddeeff00"
)

func traceparent(span string) string { return "00-" + agentTrace + "-" + span + "-01" }

// TestTracesReachAnOTLPCollector runs a Warden exporting to a real
// OTLP/HTTP receiver and drives it as an agent with a W3C trace: a
// journey with a tool call, one awaiting approval and its long poll, and
// a chat completion, each carrying personal data and a traceparent. The
// spans arrive when the server stops, children of the agent's spans, the
// model span with the GenAI attributes, the upstream in the same trace,
// and none of the personal data anywhere in what was exported.
func TestTracesReachAnOTLPCollector(t *testing.T) {
	recv := newOTLPReceiver(t)
	r := newModelRigEnv(t, map[string]string{
		"WARDEN_OTLP_ENDPOINT": recv.srv.URL,
		"WARDEN_OTLP_HEADERS":  "Authorization=Basic%20dXNlcjpwYXNz+/=,X-Scope-OrgID=warden-test",
	}, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	pii := " I am " + plantedName + ", " + plantedAddress + ", card " + plantedCard + ", mail " + plantedEmail + "."

	// A journey with a tool call, and one that stops for approval.
	j := journey(t, r.in, r.in.DemoKey, "Where is my order ORD-1003?"+pii, map[string]string{"traceparent": traceparent(agentJourneySpan)})
	if j.Status != http.StatusOK || j.str("status") != "completed" {
		t.Fatalf("journey = %d %s", j.Status, j.Raw)
	}
	refund := journey(t, r.in, r.in.DemoKey, "Refund order ORD-1004 in full, the customer returned everything."+pii, nil)
	action, _ := refund.Body["action"].(map[string]any)
	if refund.Status != http.StatusAccepted || action == nil {
		t.Fatalf("refund journey = %d %s", refund.Status, refund.Raw)
	}
	actionID, _ := action["id"].(string)
	if w := callAPI(t, ctx, http.MethodGet, r.in.URL+"/v1/actions/"+actionID+"?wait=200ms", r.in.DemoKey, nil,
		map[string]string{"traceparent": traceparent(agentWaitSpan)}); w.Status != http.StatusOK || w.str("status") != "pending" {
		t.Fatalf("long poll = %d %s", w.Status, w.Raw)
	}
	// An approver rejects it, with personal data in the reason.
	pending, err := approvals.Get(ctx, r.in.DB.Read(), actionID)
	if err != nil {
		t.Fatal(err)
	}
	alice := identity.Principal{ID: "p-a", Name: "A", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	if _, err := r.in.Agent.Execution.Decide(ctx, approvals.Request{Principal: alice, ActionID: actionID, Decision: approvals.Reject,
		Comment: "Not for " + plantedName + " at " + plantedEmail, Digest: pending.PayloadDigest}); err != nil {
		t.Fatal(err)
	}

	// A small refund is approved and executed by the background work.
	small := journey(t, r.in, r.in.DemoKey, "The customer was charged twice for ORD-1005, refund $45.50 please."+pii, nil)
	smallAction, _ := small.Body["action"].(map[string]any)
	if small.Status != http.StatusAccepted || smallAction == nil {
		t.Fatalf("small refund journey = %d %s", small.Status, small.Raw)
	}
	smallID, _ := smallAction["id"].(string)
	sa, err := approvals.Get(ctx, r.in.DB.Read(), smallID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.in.Agent.Execution.Decide(ctx, approvals.Request{Principal: alice, ActionID: smallID, Decision: approvals.Approve, Digest: sa.PayloadDigest}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the approved refund executed", func() bool {
		a, err := approvals.Get(ctx, r.in.DB.Read(), smallID)
		return err == nil && a.Status == approvals.StatusExecuted
	})

	// A chat completion.
	params := userChat(plantedPrompt())
	params.MaxCompletionTokens = openai.Int(50)
	if _, err := r.client.Chat.Completions.New(ctx, params, option.WithHeader("traceparent", traceparent(agentChatSpan))); err != nil {
		t.Fatal(err)
	}

	// Stopping the server sends what is buffered.
	r.in.Stop(t)

	// Only Warden's own spans: the OIDC library's, whose attributes
	// nobody reviewed, are not exported.
	recv.mu.Lock()
	for _, sc := range recv.scopes {
		if !strings.HasPrefix(sc, "github.com/wardenhq/warden/") {
			t.Errorf("spans of instrumentation scope %q were exported", sc)
		}
	}
	recv.mu.Unlock()

	// The model call: a span "chat ALIAS", child of the agent's.
	chats := recv.named("chat chat")
	if len(chats) != 1 {
		t.Fatalf("spans named %q: %d; all spans: %q", "chat chat", len(chats), recv.names())
	}
	chat := chats[0]
	if hex.EncodeToString(chat.TraceId) != agentTrace || hex.EncodeToString(chat.ParentSpanId) != agentChatSpan {
		t.Errorf("model span in trace %x under %x, want trace %s under the agent's span %s", chat.TraceId, chat.ParentSpanId, agentTrace, agentChatSpan)
	}
	for key, want := range map[string]string{
		"gen_ai.operation.name":     "chat",
		"gen_ai.provider.name":      "openai",
		"gen_ai.system":             "openai",
		"gen_ai.request.model":      "chat",
		"gen_ai.response.model":     "fake",
		"gen_ai.request.max_tokens": "50",
		"warden.deployment":         "fake-a",
		"warden.model_call.status":  "ok",
	} {
		if got := attr(chat.Attributes, key); got != want {
			t.Errorf("model span %s = %q, want %q", key, got, want)
		}
	}
	calls := r.calls(t)
	if len(calls) != 1 {
		t.Fatalf("%d model calls recorded, want 1", len(calls))
	}
	if got, want := attr(chat.Attributes, "gen_ai.usage.input_tokens"), strconv.FormatInt(calls[0].InputTokens, 10); got != want || want == "0" {
		t.Errorf("gen_ai.usage.input_tokens = %q, want the call's %s", got, want)
	}
	if got, want := attr(chat.Attributes, "gen_ai.usage.output_tokens"), strconv.FormatInt(calls[0].OutputTokens, 10); got != want || want == "0" {
		t.Errorf("gen_ai.usage.output_tokens = %q, want the call's %s", got, want)
	}
	if got := attr(chat.Attributes, "warden.model_call.id"); got != calls[0].ID {
		t.Errorf("warden.model_call.id = %q, want %s", got, calls[0].ID)
	}

	// Its upstream attempt: a client span under it, whose context the
	// upstream received as its traceparent.
	attempts := recv.named("chat fake")
	if len(attempts) != 1 {
		t.Fatalf("attempt spans: %d; all spans: %q", len(attempts), recv.names())
	}
	att := attempts[0]
	if !bytes.Equal(att.ParentSpanId, chat.SpanId) || att.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("attempt span under %x (kind %v), want under the model span %x as a client span", att.ParentSpanId, att.Kind, chat.SpanId)
	}
	if got := attr(att.Attributes, "http.response.status_code"); got != "200" {
		t.Errorf("attempt http.response.status_code = %q", got)
	}
	r.sent.mu.Lock()
	upstreamHeaders := r.sent.headers
	r.sent.mu.Unlock()
	if len(upstreamHeaders) != 1 {
		t.Fatalf("the upstream got %d requests, want 1", len(upstreamHeaders))
	}
	wantTP := "00-" + agentTrace + "-" + hex.EncodeToString(att.SpanId) + "-01"
	if got := upstreamHeaders[0].Get("traceparent"); got != wantTP {
		t.Errorf("upstream traceparent = %q, want %q (the agent's trace, the attempt's span)", got, wantTP)
	}

	// The journey: a span under the agent's, its tool call under it.
	var jspan *tracepb.Span
	for _, s := range recv.spans {
		if attr(s.Attributes, "warden.journey.id") == j.str("id") && strings.HasPrefix(s.Name, "journey") {
			jspan = s
		}
	}
	if jspan == nil {
		t.Fatalf("no span of journey %s; all spans: %q", j.str("id"), recv.names())
	}
	if hex.EncodeToString(jspan.TraceId) != agentTrace || hex.EncodeToString(jspan.ParentSpanId) != agentJourneySpan {
		t.Errorf("journey span in trace %x under %x, want under the agent's span %s", jspan.TraceId, jspan.ParentSpanId, agentJourneySpan)
	}
	if got := attr(jspan.Attributes, "warden.journey.status"); got != "completed" || jspan.Name != "journey order_status" {
		t.Errorf("journey span %q status %q, want %q completed", jspan.Name, got, "journey order_status")
	}
	var tool *tracepb.Span
	for _, s := range recv.spans {
		if bytes.Equal(s.ParentSpanId, jspan.SpanId) && attr(s.Attributes, "gen_ai.operation.name") == "execute_tool" {
			tool = s
		}
	}
	if tool == nil {
		t.Fatalf("no tool span under the journey; all spans: %q", recv.names())
	}
	if name := attr(tool.Attributes, "gen_ai.tool.name"); tool.Name != "execute_tool "+name || name == "" {
		t.Errorf("tool span %q, gen_ai.tool.name %q", tool.Name, name)
	}

	// The long poll for the approval.
	waits := recv.named("approval wait")
	if len(waits) != 1 {
		t.Fatalf("approval wait spans: %d; all spans: %q", len(waits), recv.names())
	}
	if hex.EncodeToString(waits[0].ParentSpanId) != agentWaitSpan || attr(waits[0].Attributes, "warden.action.id") != actionID ||
		attr(waits[0].Attributes, "warden.action.status") != "pending" {
		t.Errorf("approval wait span under %x with %v", waits[0].ParentSpanId, waits[0].Attributes)
	}

	// The time it waited for a decision.
	var decided []*tracepb.Span
	for _, s := range recv.named("approval issue_refund") {
		if attr(s.Attributes, "warden.action.id") == actionID {
			decided = append(decided, s)
		}
	}
	if len(decided) != 1 {
		t.Fatalf("approval spans of %s: %d; all spans: %q", actionID, len(decided), recv.names())
	}
	if d := decided[0]; attr(d.Attributes, "warden.action.id") != actionID || attr(d.Attributes, "warden.action.status") != "rejected" ||
		attr(d.Attributes, "warden.journey.id") != refund.str("id") || d.StartTimeUnixNano != uint64(pending.CreatedAt.UnixNano()) || d.EndTimeUnixNano <= d.StartTimeUnixNano {
		t.Errorf("approval span %v from %d to %d, want action %s rejected, from its creation (%d)", d.Attributes, d.StartTimeUnixNano, d.EndTimeUnixNano, actionID, pending.CreatedAt.UnixNano())
	}

	// The approved action's execution, its tool call under it.
	var exec *tracepb.Span
	for _, s := range recv.named("execute action issue_refund") {
		if attr(s.Attributes, "warden.action.id") == smallID {
			exec = s
		}
	}
	if exec == nil {
		t.Fatalf("no execution span of %s; all spans: %q", smallID, recv.names())
	}
	var execTool bool
	for _, s := range recv.named("execute_tool issue_refund") {
		execTool = execTool || bytes.Equal(s.ParentSpanId, exec.SpanId)
	}
	if !execTool {
		t.Errorf("no tool span under the execution of %s", smallID)
	}

	// The resource, and the collector's credentials.
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if attr(recv.resource, "service.name") != "warden" || attr(recv.resource, "service.version") != "test" {
		t.Errorf("resource = %v, want service.name warden, service.version test", recv.resource)
	}
	for _, h := range recv.headers {
		if h.Get("Authorization") != "Basic dXNlcjpwYXNz+/=" || h.Get("X-Scope-OrgID") != "warden-test" {
			t.Errorf("export headers = %v, want WARDEN_OTLP_HEADERS decoded", h)
		}
	}
	// No personal data in anything exported: names, attributes, events,
	// status messages, resource.
	for i, raw := range recv.bodies {
		assertNoPlanted(t, "trace export "+strconv.FormatInt(int64(i), 10), raw)
	}
	if strings.Contains(r.in.Logs.String(), "dXNlcjpwYXNz") {
		t.Error("the collector's credentials are in the log")
	}
}

// TestNoTracesWithoutEndpoint: without WARDEN_OTLP_ENDPOINT nothing is
// traced, and an agent's traceparent is not passed on to the upstream.
func TestNoTracesWithoutEndpoint(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	if _, err := r.client.Chat.Completions.New(context.Background(), userChat("hello"), option.WithHeader("traceparent", traceparent(agentChatSpan))); err != nil {
		t.Fatal(err)
	}
	r.sent.mu.Lock()
	defer r.sent.mu.Unlock()
	if len(r.sent.headers) != 1 || r.sent.headers[0].Get("traceparent") != "" {
		t.Errorf("upstream requests %d, traceparent %q; want 1 without one", len(r.sent.headers), r.sent.headers[0].Get("traceparent"))
	}
}

// TestTracesOfFallbackStreamRefusalAndModelJourney: a deployment that
// fails falls over to the next, each attempt a span of its own, also for
// a stream (whose attempt span lasts until the stream's end); a refused
// call is a failed span with its error code as error.type; a
// model-driven journey's model calls are its children, and those after
// the approval its continuation's.
func TestTracesOfFallbackStreamRefusalAndModelJourney(t *testing.T) {
	recv := newOTLPReceiver(t)
	r := newModelRigEnv(t, map[string]string{"WARDEN_OTLP_ENDPOINT": recv.srv.URL}, 1_000_000,
		deployment("broken", "fail-500", 0), deployment("fake-b", "fake", 1))
	ctx := context.Background()
	if _, err := r.client.Chat.Completions.New(ctx, userChat(plantedPrompt()), option.WithHeader("traceparent", traceparent(agentChatSpan))); err != nil {
		t.Fatal(err)
	}
	stream := r.client.Chat.Completions.NewStreaming(ctx, userChat(plantedPrompt()), option.WithHeader("traceparent", traceparent(agentJourneySpan)))
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "other",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(plantedPrompt())}}); err == nil {
		t.Fatal("a call of an alias outside the key's scopes succeeded")
	}
	// An embeddings call: a span of its own, its attempts under it.
	if _, err := r.client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "chat",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String(plantedPrompt())}},
		option.WithHeader("traceparent", traceparent(agentEmbedSpan))); err != nil {
		t.Fatal(err)
	}
	// A model-driven journey: its model calls under it, and those after
	// the approval under its continuation.
	body, _ := json.Marshal(map[string]string{"input": "model demo: refund ORD-1005, it arrived torn", "skill": "model_refunds"})
	mj := callAPI(t, ctx, http.MethodPost, r.in.URL+"/v1/journeys", r.in.DemoKey, body, map[string]string{"traceparent": traceparent(agentWaitSpan)})
	if mj.Status != http.StatusAccepted {
		t.Fatalf("model-driven journey = %d %s", mj.Status, mj.Raw)
	}
	a, err := approvals.Get(ctx, r.in.DB.Read(), mj.Body["action"].(map[string]any)["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.ApprovalsRequired {
		p := identity.Principal{ID: "p-" + strconv.Itoa(i), Name: "Approver", Roles: []string{"approver"}, Tenants: []string{"acme"}}
		if _, err := r.in.Agent.Execution.Decide(ctx, approvals.Request{Principal: p, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the model-driven journey completed", func() bool {
		g := callAPI(t, ctx, http.MethodGet, r.in.URL+"/v1/journeys/"+mj.str("id"), r.in.DemoKey, nil, nil)
		return g.str("status") == "completed"
	})
	r.in.Stop(t)

	var mspan, cont *tracepb.Span
	for _, s := range recv.spans {
		switch {
		case s.Name == "journey model_refunds" && hex.EncodeToString(s.ParentSpanId) == agentWaitSpan:
			mspan = s
		case s.Name == "journey continue" && attr(s.Attributes, "warden.journey.id") == mj.str("id"):
			cont = s
		}
	}
	if mspan == nil || cont == nil {
		t.Fatalf("journey span %v, continuation span %v; all spans: %q", mspan != nil, cont != nil, recv.names())
	}
	under := map[string]int{}
	for _, s := range recv.named("chat demo-agent") {
		switch {
		case bytes.Equal(s.ParentSpanId, mspan.SpanId):
			under["journey"]++
		case bytes.Equal(s.ParentSpanId, cont.SpanId):
			under["continue"]++
		}
		if attr(s.Attributes, "warden.journey.id") != mj.str("id") {
			t.Errorf("model span %v does not name journey %s", s.Attributes, mj.str("id"))
		}
	}
	if under["journey"] != 2 || under["continue"] != 1 {
		t.Errorf("model spans under the journey and its continuation = %v, want 2 (lookup, refund) and 1 (answer)", under)
	}

	for _, parent := range []string{agentChatSpan, agentJourneySpan} {
		var chat *tracepb.Span
		for _, s := range recv.named("chat chat") {
			if hex.EncodeToString(s.ParentSpanId) == parent {
				chat = s
			}
		}
		if chat == nil {
			t.Fatalf("no model span under %s; all spans: %q", parent, recv.names())
		}
		stream := parent == agentJourneySpan
		if got := attr(chat.Attributes, "warden.stream"); got != strconv.FormatBool(stream) {
			t.Errorf("model span under %s: warden.stream = %q", parent, got)
		}
		if attr(chat.Attributes, "warden.attempts") != "2" || attr(chat.Attributes, "gen_ai.response.model") != "fake" ||
			attr(chat.Attributes, "warden.deployment") != "fake-b" || attr(chat.Attributes, "error.type") != "" || chat.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("model span under %s = %v, want 2 attempts answered by fake-b, no error", parent, chat.Attributes)
		}
		got := map[string]string{}
		for _, s := range recv.spans {
			if bytes.Equal(s.ParentSpanId, chat.SpanId) {
				got[s.Name] = attr(s.Attributes, "http.response.status_code") + " " + attr(s.Attributes, "error.type")
				if s.EndTimeUnixNano < s.StartTimeUnixNano || s.EndTimeUnixNano == 0 {
					t.Errorf("attempt span %s never ended", s.Name)
				}
			}
		}
		if len(got) != 2 || got["chat fail-500"] != "500 500" || got["chat fake"] != "200 " {
			t.Errorf("attempt spans under the model span under %s (status, error.type) = %v, want chat fail-500 failed with 500, chat fake 200", parent, got)
		}
	}
	refused := recv.named("chat other")
	if len(refused) != 1 || attr(refused[0].Attributes, "error.type") != "model_not_found" || refused[0].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("refused call's spans = %v, want one with error.type model_not_found", refused)
	}
	embeds := recv.named("embeddings chat")
	if len(embeds) != 1 || hex.EncodeToString(embeds[0].ParentSpanId) != agentEmbedSpan || attr(embeds[0].Attributes, "gen_ai.operation.name") != "embeddings" ||
		attr(embeds[0].Attributes, "warden.deployment") != "fake-b" || attr(embeds[0].Attributes, "gen_ai.usage.input_tokens") == "" {
		t.Errorf("embeddings spans = %v, want one under the agent's span, answered by fake-b with its usage", embeds)
	} else {
		under := 0
		for _, s := range recv.spans {
			if bytes.Equal(s.ParentSpanId, embeds[0].SpanId) && strings.HasPrefix(s.Name, "embeddings ") && attr(s.Attributes, "gen_ai.operation.name") == "embeddings" {
				under++
			}
		}
		if under != 2 {
			t.Errorf("%d embeddings attempt spans under the call's, want 2 (fail-500, fake)", under)
		}
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for i, raw := range recv.bodies {
		assertNoPlanted(t, "trace export "+strconv.Itoa(i), raw)
	}
}
