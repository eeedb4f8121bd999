package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/wardenhq/warden/models"
)

func respParams(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: "chat", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(text)}}
}

var weatherTool = responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Strict: openai.Bool(false),
	Description: openai.String("The weather in a city"),
	Parameters:  map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}}

// The Responses door through OpenAI's own Go client: an answer with its
// usage, a function call continued by previous_response_id, GET and
// DELETE, the call recorded as a Responses call and paid for.
func TestResponsesThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	p := respParams("hello there")
	p.Instructions = openai.String("be brief")
	got, err := r.client.Responses.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got.OutputText() != "echo: hello there" || got.Model != "chat" || got.Status != "completed" || got.Usage.OutputTokens != 3 ||
		got.Usage.TotalTokens != got.Usage.InputTokens+3 || !strings.HasPrefix(got.ID, "resp_") {
		t.Fatalf("response = %q %s %s usage %+v id %s", got.OutputText(), got.Model, got.Status, got.Usage, got.ID)
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Operation != models.OpResponses || cs[0].InputTokens != got.Usage.InputTokens {
		t.Fatalf("calls = %+v", cs)
	}
	if b := r.budget(t); b.SpentMicros != cs[0].CostMicros || b.SpentMicros == 0 || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d reserved %d, call cost %d", b.SpentMicros, b.ReservedMicros, cs[0].CostMicros)
	}

	// A function call, its result sent back on the stored context.
	q := respParams("weather in Oslo")
	q.Tools = []responses.ToolUnionParam{weatherTool}
	call, err := r.client.Responses.New(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(call.Output) != 1 || call.Output[0].Type != "function_call" || call.Output[0].Name != "get_weather" || call.Output[0].Arguments.OfString != `{"query":"weather in Oslo"}` {
		t.Fatalf("output = %+v", call.Output)
	}
	next, err := r.client.Responses.New(ctx, responses.ResponseNewParams{Model: "chat", PreviousResponseID: openai.String(call.ID),
		Tools: []responses.ToolUnionParam{weatherTool},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(call.Output[0].CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("12 degrees")}}}}}})
	if err != nil || next.OutputText() != "tool said: 12 degrees" || next.PreviousResponseID != call.ID {
		t.Fatalf("after the tool result: %+v, %v", next, err)
	}

	// GET and DELETE; another key of the tenant finds none of it.
	stored, err := r.client.Responses.Get(ctx, got.ID, responses.ResponseGetParams{})
	if err != nil || stored.OutputText() != "echo: hello there" || stored.ID != got.ID {
		t.Fatalf("GET = %+v, %v", stored, err)
	}
	_, otherKey := newKeyIn(t, r.in, "modelco", "other-bot", []string{"model:chat"}, "test")
	other := openai.NewClient(option.WithBaseURL(r.in.URL+"/v1/"), option.WithAPIKey(otherKey), option.WithMaxRetries(0))
	if _, err := other.Responses.Get(ctx, got.ID, responses.ResponseGetParams{}); apiErr(t, err).StatusCode != http.StatusNotFound {
		t.Fatalf("another key's GET = %v", err)
	}
	if err := other.Responses.Delete(ctx, got.ID); apiErr(t, err).StatusCode != http.StatusNotFound {
		t.Fatalf("another key's DELETE = %v", err)
	}
	cont := respParams("more")
	cont.PreviousResponseID = openai.String(got.ID)
	if _, err := other.Responses.New(ctx, cont); apiErr(t, err).StatusCode != http.StatusNotFound || apiErr(t, err).Code != "previous_response_not_found" {
		t.Fatalf("another key continues it: %v", err)
	}
	del := callAPI(t, ctx, http.MethodDelete, r.in.URL+"/v1/responses/"+got.ID, r.key, nil, nil)
	if del.Status != http.StatusOK || del.Body["id"] != got.ID || del.Body["object"] != "response" || del.Body["deleted"] != true {
		t.Fatalf("DELETE = %d %s", del.Status, del.Raw)
	}
	if _, err := r.client.Responses.Get(ctx, got.ID, responses.ResponseGetParams{}); apiErr(t, err).StatusCode != http.StatusNotFound {
		t.Fatalf("GET after DELETE = %v", err)
	}
}

// A structured answer: text.format json_schema reaches the upstream as
// response_format.
func TestResponsesJSONSchemaThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	p := respParams("hi")
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("echo",
		map[string]any{"type": "object", "properties": map[string]any{"echo": map[string]any{"type": "string"}}, "required": []string{"echo"}})}
	got, err := r.client.Responses.New(context.Background(), p)
	if err != nil || got.OutputText() != `{"echo":"hi"}` {
		t.Fatalf("json_schema = %+v, %v", got, err)
	}
	if sent := r.sent.all(); !bytes.Contains(sent, []byte(`"response_format":{"json_schema":{"name":"echo"`)) &&
		!bytes.Contains(sent, []byte(`"response_format":{"type":"json_schema"`)) {
		t.Fatalf("the upstream got %s", sent)
	}
}

// The event stream through the SDK: text deltas, then completed with its
// usage; a function call's arguments stream too.
func TestResponsesStreamThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	stream := r.client.Responses.NewStreaming(ctx, respParams("one two three four"))
	var text strings.Builder
	var types []string
	var done responses.Response
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			done = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "echo: one two three four" || done.Status != "completed" || done.Usage.OutputTokens != 5 || done.OutputText() != text.String() ||
		types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("stream %q, events %v, completed %+v", text.String(), types, done.Usage)
	}
	if cs := r.calls(t); len(cs) != 1 || !cs[0].Stream || cs[0].Operation != models.OpResponses || cs[0].OutputTokens != 5 {
		t.Fatalf("calls = %+v", cs)
	}

	q := respParams("weather in Oslo")
	q.Tools = []responses.ToolUnionParam{weatherTool}
	stream = r.client.Responses.NewStreaming(ctx, q)
	var args strings.Builder
	var final string
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.function_call_arguments.delta":
			args.WriteString(ev.Delta)
		case "response.function_call_arguments.done":
			final = ev.Arguments
		}
	}
	if err := stream.Err(); err != nil || args.String() != `{"query":"weather in Oslo"}` || final != args.String() {
		t.Fatalf("arguments streamed %q, done %q, %v", args.String(), final, err)
	}
}

// An upstream that cuts its stream: the agent gets response.failed and
// an error event, never response.completed, and the SDK raises.
func TestResponsesCutStreamFailsThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("cutter", "cut", 0))
	stream := r.client.Responses.NewStreaming(context.Background(), respParams("one two three four five six"))
	var types []string
	var failed responses.Response
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.Type == "response.failed" {
			failed = ev.AsResponseFailed().Response
		}
	}
	// The SDK raises on the error event that follows response.failed.
	var se *ssestream.StreamError
	if !errors.As(stream.Err(), &se) || !strings.Contains(se.Message, failed.Error.Message) {
		t.Fatalf("the stream's error = %v, want the SDK to raise the cut", stream.Err())
	}
	if strings.Contains(strings.Join(types, " "), "response.completed") || len(types) < 1 || types[len(types)-1] != "response.failed" {
		t.Fatalf("events = %v", types)
	}
	if failed.Status != "failed" || failed.Error.Code == "" || failed.Error.Message == "" {
		t.Fatalf("failed response %+v", failed.Error)
	}
	if cs := r.calls(t); len(cs) != 1 || cs[0].Status != models.StatusCut {
		t.Fatalf("calls = %+v", cs)
	}
}

// Errors of the Responses routes are OpenAI's shape: a 402 the budget
// cannot cover, a member Warden does not serve, a method the route does
// not take.
func TestResponsesErrorsInOpenAIShape(t *testing.T) {
	r := newModelRig(t, 100, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	_, err := r.client.Responses.New(ctx, respParams(strings.Repeat("long prompt ", 100)))
	if e := apiErr(t, err); e.StatusCode != http.StatusPaymentRequired || e.Type != "insufficient_quota" {
		t.Fatalf("over budget = %d %q %q", e.StatusCode, e.Type, e.Code)
	}
	res := callAPI(t, ctx, http.MethodPost, r.in.URL+"/v1/responses", r.key, []byte(`{"model":"chat","input":"hi","tools":[{"type":"web_search"}]}`), nil)
	if res.Status != http.StatusBadRequest || !bytes.Contains(res.Raw, []byte(`"type":"invalid_request_error"`)) || !bytes.Contains(res.Raw, []byte("web_search")) {
		t.Fatalf("a built-in tool = %d %s", res.Status, res.Raw)
	}
	res = callAPI(t, ctx, http.MethodPut, r.in.URL+"/v1/responses/resp_x", r.key, nil, nil)
	if res.Status != http.StatusMethodNotAllowed || !bytes.Contains(res.Raw, []byte(`"type":"invalid_request_error"`)) {
		t.Fatalf("PUT = %d %s", res.Status, res.Raw)
	}
	if r.fake.Requests() != 0 {
		t.Fatalf("the upstream was called %d times for refused calls", r.fake.Requests())
	}
}
