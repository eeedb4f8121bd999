package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
)

func nativeDeployment(name, upstream string, priority int) models.Deployment {
	d := deployment(name, upstream, priority)
	d.ResponsesAPI = true
	return d
}

// The native Responses path through OpenAI's Go client: the upstream is
// asked at /responses, the answer names the alias and Warden's id, a
// function call is continued by previous_response_id (the upstream gets
// the whole context, store false), and a stream comes through.
func TestNativeResponsesThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, nativeDeployment("native-a", "fake", 0))
	ctx := context.Background()
	got, err := r.client.Responses.New(ctx, respParams("hello there"))
	if err != nil {
		t.Fatal(err)
	}
	if got.OutputText() != "echo: hello there" || got.Model != "chat" || got.Status != "completed" || got.Usage.OutputTokens != 3 ||
		!strings.HasPrefix(got.ID, "resp_") || got.ID == "resp_fake" {
		t.Fatalf("response = %q %s %s usage %+v id %s", got.OutputText(), got.Model, got.Status, got.Usage, got.ID)
	}
	if seen := r.fake.Seen(); len(seen) != 1 || seen[0].Path != "/responses" {
		t.Fatalf("upstream saw %+v", seen)
	}
	cs := r.calls(t)
	if len(cs) != 1 || cs[0].Operation != models.OpResponses || cs[0].InputTokens != got.Usage.InputTokens || cs[0].Deployment != "native-a" {
		t.Fatalf("calls = %+v", cs)
	}
	if b := r.budget(t); b.SpentMicros != cs[0].CostMicros || b.SpentMicros == 0 || b.ReservedMicros != 0 {
		t.Fatalf("budget spent %d reserved %d, call cost %d", b.SpentMicros, b.ReservedMicros, cs[0].CostMicros)
	}
	// Warden's headers, as on chat.
	res := callAPI(t, ctx, http.MethodPost, r.in.URL+"/v1/responses", r.key, []byte(`{"model":"chat","input":"hi"}`), nil)
	if cost, err := strconv.ParseInt(res.Header.Get(models.HeaderCost), 10, 64); res.Status != http.StatusOK || err != nil || cost <= 0 ||
		res.Header.Get(models.HeaderRequestID) == "" {
		t.Fatalf("headers = %d %v", res.Status, res.Header)
	}

	q := respParams("weather in Oslo")
	q.Tools = []responses.ToolUnionParam{weatherTool}
	call, err := r.client.Responses.New(ctx, q)
	if err != nil || len(call.Output) != 1 || call.Output[0].Type != "function_call" || call.Output[0].Name != "get_weather" {
		t.Fatalf("function call = %+v, %v", call, err)
	}
	next, err := r.client.Responses.New(ctx, responses.ResponseNewParams{Model: "chat", PreviousResponseID: openai.String(call.ID),
		Tools: []responses.ToolUnionParam{weatherTool},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(call.Output[0].CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("12 degrees")}}}}}})
	if err != nil || next.OutputText() != "tool said: 12 degrees" || next.PreviousResponseID != call.ID {
		t.Fatalf("after the tool result: %+v, %v", next, err)
	}
	seen := r.fake.Seen()
	var sent struct {
		Store              *bool            `json:"store"`
		PreviousResponseID *string          `json:"previous_response_id"`
		Input              []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(seen[len(seen)-1].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Store == nil || *sent.Store || sent.PreviousResponseID != nil || len(sent.Input) != 3 || sent.Input[1]["type"] != "function_call" ||
		sent.Input[2]["type"] != "function_call_output" {
		t.Fatalf("the upstream got %s", seen[len(seen)-1].Body)
	}

	stream := r.client.Responses.NewStreaming(ctx, respParams("one two three four"))
	var text strings.Builder
	var done responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			done = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil || text.String() != "echo: one two three four" || done.Model != "chat" || done.Usage.OutputTokens != 5 {
		t.Fatalf("stream %q, completed %+v, %v", text.String(), done.Usage, err)
	}
	if stored, err := r.client.Responses.Get(ctx, done.ID, responses.ResponseGetParams{}); err != nil || stored.OutputText() != text.String() {
		t.Fatalf("GET of the streamed response = %+v, %v", stored, err)
	}
}

// A native stream the upstream cuts: the SDK raises, nothing completes.
func TestNativeResponsesCutRaisesThroughOpenAISDK(t *testing.T) {
	r := newModelRig(t, 1_000_000, nativeDeployment("cutter", "cut", 0))
	stream := r.client.Responses.NewStreaming(context.Background(), respParams("one two three four five six"))
	var types []string
	for stream.Next() {
		types = append(types, stream.Current().Type)
	}
	var se *ssestream.StreamError
	if !errors.As(stream.Err(), &se) || !strings.Contains(se.Message, "ended before") {
		t.Fatalf("the stream's error = %v, want the SDK to raise the cut", stream.Err())
	}
	if strings.Contains(strings.Join(types, " "), "response.completed") || types[len(types)-1] != "response.failed" {
		t.Fatalf("events = %v", types)
	}
	if seen := r.fake.Seen(); len(seen) != 1 || seen[0].Path != "/responses" {
		t.Fatalf("upstream saw %+v", seen)
	}
	if cs := r.calls(t); len(cs) != 1 || cs[0].Status != models.StatusCut {
		t.Fatalf("calls = %+v", cs)
	}
}

// The Responses API setting round-trips through the console's form: on
// when added, shown in the list and the edit form, off again when saved
// unchecked, each change audited.
func TestAdminModelsResponsesAPISetting(t *testing.T) {
	in, b := adminSession(t, "erin")
	up := httptest.NewServer(fakeupstream.New())
	t.Cleanup(up.Close)
	ctx := context.Background()

	form := modelFormValues(up.URL + "/v1")
	form.Set("responses_api", "on")
	if p := b.post("/models", b.withCSRF(form), nil); text(p, "notice") != "Deployment added." || text(p, "model-responses-api-fake-east") == "" {
		t.Fatalf("create = %d notice %q row %q", p.Status, text(p, "notice"), text(p, "model-fake-east"))
	}
	if d, err := models.Get(ctx, in.DB.Read(), "fake-east"); err != nil || !d.ResponsesAPI {
		t.Fatalf("stored = %+v, %v", d, err)
	}
	if evs := adminEvents(t, in.DB, "model.create"); len(evs) != 1 || evs[0].Details["responses_api"] != true {
		t.Fatalf("model.create events = %+v", evs)
	}
	if e := b.get("/models/fake-east/edit"); e.Doc.Find(`[data-testid="model-responses-api"]`).AttrOr("checked", "no") == "no" {
		t.Fatalf("the edit form does not show the setting on")
	}

	form.Del("responses_api")
	form.Del("api_key")
	if p := b.post("/models/fake-east", b.withCSRF(form), nil); text(p, "notice") != "Deployment saved." || text(p, "model-responses-api-fake-east") != "" {
		t.Fatalf("update = %d notice %q", p.Status, text(p, "notice"))
	}
	if d, err := models.Get(ctx, in.DB.Read(), "fake-east"); err != nil || d.ResponsesAPI {
		t.Fatalf("stored after unchecking = %+v, %v", d, err)
	}
	if evs := adminEvents(t, in.DB, "model.update"); len(evs) != 1 || fmt.Sprint(evs[0].Details["changed"]) != "[responses_api]" {
		t.Fatalf("model.update events = %+v", evs)
	}
	if e := b.get("/models/fake-east/edit"); e.Doc.Find(`[data-testid="model-responses-api"]`).AttrOr("checked", "no") != "no" {
		t.Fatalf("the edit form shows the setting on after it was switched off")
	}
}
