package models_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

func respRig(t *testing.T, o rigOptions, deps ...models.Deployment) *gwRig {
	t.Helper()
	if o.redactor == nil {
		o.redactor = redact.New(bytes.Repeat([]byte{9}, 32))
	}
	return newGWRig(t, o, deps...)
}

// responses posts a Responses request as caller.
func (r *gwRig) responses(caller admission.Caller, body string) chatResult {
	r.t.Helper()
	w := httptest.NewRecorder()
	err := r.g.Responses(context.Background(), caller, []byte(body), flusher{w})
	if err != nil {
		return chatResult{status: problem.From(err).Status(), err: err}
	}
	return chatResult{status: w.Code, body: w.Body.Bytes()}
}

// respObject is what the tests read of a Response.
type respObject struct {
	ID                 string  `json:"id"`
	Object             string  `json:"object"`
	Status             string  `json:"status"`
	Model              string  `json:"model"`
	Store              bool    `json:"store"`
	Instructions       *string `json:"instructions"`
	PreviousResponseID *string `json:"previous_response_id"`
	Output             []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Status    string `json:"status"`
		Role      string `json:"role"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (o respObject) text() string {
	var b strings.Builder
	for _, it := range o.Output {
		for _, c := range it.Content {
			if c.Type == "output_text" {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

func decodeResp(t *testing.T, res chatResult) respObject {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("response = %d %v %s", res.status, res.err, res.body)
	}
	var o respObject
	if err := json.Unmarshal(res.body, &o); err != nil {
		t.Fatalf("%v: %s", err, res.body)
	}
	return o
}

func TestResponsesAnswer(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","instructions":"be brief","input":"hello there","max_output_tokens":50}`))
	if !strings.HasPrefix(o.ID, "resp_") || o.Object != "response" || o.Status != "completed" || o.Model != "chat" || !o.Store ||
		o.Instructions == nil || *o.Instructions != "be brief" || o.PreviousResponseID != nil {
		t.Fatalf("response = %+v", o)
	}
	if len(o.Output) != 1 || o.Output[0].Type != "message" || o.Output[0].Role != "assistant" || o.Output[0].Status != "completed" ||
		!strings.HasPrefix(o.Output[0].ID, "msg_") || o.text() != "echo: hello there" {
		t.Fatalf("output = %+v", o.Output)
	}
	cs := r.calls()
	if len(cs) != 1 || cs[0].Operation != models.OpResponses || cs[0].Status != models.StatusOK {
		t.Fatalf("calls = %+v", cs)
	}
	if o.Usage == nil || o.Usage.InputTokens != cs[0].InputTokens || o.Usage.OutputTokens != 3 || o.Usage.TotalTokens != cs[0].InputTokens+3 {
		t.Fatalf("usage = %+v, call %+v", o.Usage, cs[0])
	}
	// The instructions are the system message the upstream saw.
	if seen := r.fake.Seen(); len(seen) != 1 || seen[0].Messages != 2 || seen[0].LastRole != "user" {
		t.Fatalf("upstream saw %+v", seen)
	}
	if b := r.budget(); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 {
		t.Fatalf("budget = %+v, call cost %d", b, cs[0].CostMicros)
	}

	// Stored: GET gives it back; DELETE deletes it.
	got, err := r.g.Response(context.Background(), r.caller, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	g := decodeResp(t, chatResult{status: 200, body: got})
	if g.ID != o.ID || g.text() != "echo: hello there" || g.Status != "completed" || !g.Store || g.Usage == nil || g.Usage.OutputTokens != 3 {
		t.Fatalf("GET = %s", got)
	}
	if err := r.g.DeleteResponse(context.Background(), r.caller, o.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.g.Response(context.Background(), r.caller, o.ID); problem.From(err).Status() != http.StatusNotFound {
		t.Fatalf("GET after DELETE = %v", err)
	}
	if err := r.g.DeleteResponse(context.Background(), r.caller, o.ID); problem.From(err).Status() != http.StatusNotFound {
		t.Fatalf("DELETE again = %v", err)
	}

	// store false: answered, never kept.
	o = decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"hi","store":false}`))
	if o.Store || o.text() != "echo: hi" {
		t.Fatalf("store false = %+v", o)
	}
	if _, err := r.g.Response(context.Background(), r.caller, o.ID); problem.From(err).Status() != http.StatusNotFound {
		t.Fatalf("GET of an unstored response = %v", err)
	}
}

func TestResponsesFunctionCallRoundTrip(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	tools := `[{"type":"function","name":"get_weather","description":"The weather in a city","parameters":{"type":"object","properties":{"query":{"type":"string"}}},"strict":false}]`
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","instructions":"use tools","tools":`+tools+`,"input":[{"role":"user","content":[{"type":"input_text","text":"weather in Oslo"}]}]}`))
	if len(o.Output) != 1 || o.Output[0].Type != "function_call" || o.Output[0].Name != "get_weather" || o.Output[0].CallID != "call_1" ||
		o.Output[0].Arguments != `{"query":"weather in Oslo"}` || !strings.HasPrefix(o.Output[0].ID, "fc_") {
		t.Fatalf("output = %+v", o.Output)
	}
	next := decodeResp(t, r.responses(r.caller, `{"model":"chat","tools":`+tools+`,"previous_response_id":"`+o.ID+`",`+
		`"input":[{"type":"function_call_output","call_id":"call_1","output":"12 degrees"}]}`))
	if next.text() != "tool said: 12 degrees" || next.PreviousResponseID == nil || *next.PreviousResponseID != o.ID {
		t.Fatalf("after the tool result: %+v", next)
	}
	// The upstream saw the user's message, the assistant's call and the
	// tool's result; the first response's instructions are not carried.
	seen := r.fake.Seen()
	if len(seen) != 2 || seen[1].Messages != 3 || seen[1].LastRole != "tool" {
		t.Fatalf("upstream saw %+v", seen)
	}
	// A third turn continues the whole chain.
	third := decodeResp(t, r.responses(r.caller, `{"model":"chat","previous_response_id":"`+next.ID+`","input":"thanks"}`))
	if third.text() != "echo: thanks" || len(r.fake.Seen()) != 3 || r.fake.Seen()[2].Messages != 5 {
		t.Fatalf("third turn %+v, upstream saw %+v", third, r.fake.Seen())
	}
}

func TestResponsesJSONSchema(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"hi","text":{"format":{"type":"json_schema","name":"echo","strict":true,`+
		`"schema":{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}}}}`))
	if o.text() != `{"echo":"hi"}` {
		t.Fatalf("json_schema answer = %q", o.text())
	}
	var raw map[string]any
	_ = json.Unmarshal(r.responses(r.caller, `{"model":"chat","input":"hi","text":{"format":{"type":"json_object"}}}`).body, &raw)
	if f := raw["text"].(map[string]any)["format"].(map[string]any); f["type"] != "json_object" {
		t.Fatalf("text.format echoed = %v", f)
	}
}

// What the Responses door cannot serve is refused by name, before
// anything is reserved or sent.
func TestResponsesUnsupportedMembersAreRefused(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	for _, tt := range []struct{ name, body, code, says string }{
		{"web search", `{"model":"chat","input":"hi","tools":[{"type":"web_search"}]}`, "unsupported_field", "web_search"},
		{"background", `{"model":"chat","input":"hi","background":true}`, "unsupported_field", "background"},
		{"conversation", `{"model":"chat","input":"hi","conversation":"conv_1"}`, "unsupported_field", "conversation"},
		{"prompt template", `{"model":"chat","input":"hi","prompt":{"id":"pmpt_1"}}`, "unsupported_field", "prompt"},
		{"image", `{"model":"chat","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://example.com/a.png"}]}]}`, "unsupported_content", "input_image"},
		{"reasoning item", `{"model":"chat","input":[{"type":"reasoning","id":"rs_1","summary":[]}]}`, "unsupported_field", "reasoning"},
		{"truncation auto", `{"model":"chat","input":"hi","truncation":"auto"}`, "unsupported_field", "truncation"},
		{"include", `{"model":"chat","input":"hi","include":["file_search_call.results"]}`, "unsupported_field", "include"},
		{"text format grammar", `{"model":"chat","input":"hi","text":{"format":{"type":"grammar"}}}`, "unsupported_field", "grammar"},
		{"no input", `{"model":"chat"}`, "invalid_request", "input"},
		{"no model", `{"input":"hi"}`, "invalid_request", "model"},
		{"unknown previous", `{"model":"chat","input":"hi","previous_response_id":"resp_nope"}`, "previous_response_not_found", "resp_nope"},
	} {
		res := r.responses(r.caller, tt.body)
		p := problem.From(res.err)
		if res.err == nil || p.Code != tt.code || !strings.Contains(p.Message, tt.says) {
			t.Errorf("%s = %d %v, want %s naming %q", tt.name, res.status, res.err, tt.code, tt.says)
		}
	}
	if r.fake.Requests() != 0 {
		t.Errorf("the upstream saw %d requests, want none", r.fake.Requests())
	}
	if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != 0 {
		t.Errorf("budget after refusals = %+v", b)
	}
	// A key without the alias's scope is refused as chat refuses it.
	other := r.caller
	other.Key.Scopes = []string{"model:other"}
	if res := r.responses(other, `{"model":"chat","input":"hi"}`); res.status != http.StatusForbidden {
		t.Errorf("a key without model:chat = %d %v", res.status, res.err)
	}
}

// The reservation bounds the translated body: the tools' descriptions
// and the context previous_response_id brings are prompt the upstream
// bills.
func TestResponsesReservationBoundsContextAndTools(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	ctx := context.Background()
	long := strings.Repeat("context words ", 200<<10/14) // 200 KiB, and its echo (cut at the output cap)
	first := decodeResp(t, r.responses(r.caller, `{"model":"chat","store":true,"input":"`+long+`"}`))
	desc := strings.Repeat("describe the tool at length ", 100<<10/28)
	tools := `[{"type":"function","name":"lookup","description":"` + desc + `","parameters":{"type":"object"}}]`
	body := `{"model":"chat","tools":` + tools + `,"previous_response_id":"` + first.ID + `","input":"go on"}`
	// The prompt bound at $10 a million tokens, of the context and the
	// tools alone, with the output cap at $30.
	contextBytes := int64(len(long) + len(first.text()) + len(desc))
	lower := priced(contextBytes, 4096)

	// A budget that covers the request without its context does not
	// cover it with its context: 402, nothing sent.
	spent := r.budget().SpentMicros
	if err := r.db.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Month, LimitMicros: spent + lower*3/4, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	res := r.responses(r.caller, body)
	if res.status != http.StatusPaymentRequired || r.fake.Requests() != 1 {
		t.Fatalf("over budget = %d %v, upstream requests %d", res.status, res.err, r.fake.Requests())
	}
	if ok := r.responses(r.caller, `{"model":"chat","tools":`+tools+`,"input":"go on"}`); ok.status != http.StatusOK {
		t.Fatalf("without the context = %d %v", ok.status, ok.err)
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Fatalf("reserved after the refusal = %d", b.ReservedMicros)
	}

	if err := r.db.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Month, LimitMicros: 1_000_000_000, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	decodeResp(t, r.responses(r.caller, body))
	c := r.calls()[0]
	if c.Operation != models.OpResponses || c.ReservedMicros < lower || c.CostMicros > c.ReservedMicros || c.InputTokens < contextBytes/4 {
		t.Fatalf("reserved %d µ (lower bound %d µ), charged %d µ for %d input tokens", c.ReservedMicros, lower, c.CostMicros, c.InputTokens)
	}
}

// sseEvent is one event of a Responses stream.
type sseEvent struct {
	name string
	data map[string]any
}

func readEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if d["type"] != name {
				t.Fatalf("event %q carries type %v", name, d["type"])
			}
			if n, _ := d["sequence_number"].(float64); int(n) != len(out) {
				t.Fatalf("event %d (%s) has sequence_number %v", len(out), name, d["sequence_number"])
			}
			out = append(out, sseEvent{name, d})
		}
	}
	return out
}

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

// compact drops repeats of one event name in a row.
func compact(ns []string) string {
	var out []string
	for _, n := range ns {
		if len(out) == 0 || out[len(out)-1] != n {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

func TestResponsesStream(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	res := r.responses(r.caller, `{"model":"chat","input":"one two three","stream":true}`)
	if res.status != http.StatusOK {
		t.Fatalf("stream = %d %v", res.status, res.err)
	}
	evs := readEvents(t, res.body)
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta " +
		"response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := compact(names(evs)); got != want {
		t.Fatalf("events:\n%s\nwant\n%s", got, want)
	}
	var text strings.Builder
	for _, e := range evs {
		if e.name == "response.output_text.delta" {
			text.WriteString(e.data["delta"].(string))
		}
	}
	last := evs[len(evs)-1].data["response"].(map[string]any)
	usage, _ := last["usage"].(map[string]any)
	if text.String() != "echo: one two three" || last["status"] != "completed" || usage == nil || usage["output_tokens"] != float64(4) {
		t.Fatalf("text %q, completed response %v", text.String(), last)
	}
	id := last["id"].(string)
	if got, err := r.g.Response(context.Background(), r.caller, id); err != nil || !bytes.Contains(got, []byte("echo: one two three")) {
		t.Fatalf("GET of the streamed response = %s, %v", got, err)
	}
	if cs := r.calls(); len(cs) != 1 || !cs[0].Stream || cs[0].Operation != models.OpResponses || cs[0].OutputTokens != 4 {
		t.Fatalf("calls = %+v", cs)
	}

	// A streamed function call: its arguments as deltas, then done.
	res = r.responses(r.caller, `{"model":"chat","input":"weather in Oslo","stream":true,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]}`)
	evs = readEvents(t, res.body)
	want = "response.created response.in_progress response.output_item.added response.function_call_arguments.delta " +
		"response.function_call_arguments.done response.output_item.done response.completed"
	if got := compact(names(evs)); got != want {
		t.Fatalf("events:\n%s\nwant\n%s", got, want)
	}
	item := evs[len(evs)-2].data["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "get_weather" || item["call_id"] != "call_1" || item["arguments"] != `{"query":"weather in Oslo"}` {
		t.Fatalf("function call item = %v", item)
	}
}

// A stream the upstream cuts ends in response.failed and an error event,
// never response.completed; it is charged for what arrived and not
// stored.
func TestResponsesCutStreamFails(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "cut"))
	res := r.responses(r.caller, `{"model":"chat","input":"one two three four five six","stream":true}`)
	if res.status != http.StatusOK {
		t.Fatalf("stream = %d %v", res.status, res.err)
	}
	evs := readEvents(t, res.body)
	ns := names(evs)
	if len(ns) < 2 || ns[len(ns)-2] != "response.failed" || ns[len(ns)-1] != "error" || strings.Contains(strings.Join(ns, " "), "completed") {
		t.Fatalf("events = %v", ns)
	}
	failed := evs[len(evs)-2].data["response"].(map[string]any)
	errObj, _ := failed["error"].(map[string]any)
	if failed["status"] != "failed" || errObj == nil || errObj["code"] == "" || errObj["message"] == "" {
		t.Fatalf("failed response = %v", failed)
	}
	last := evs[len(evs)-1].data
	if last["code"] != errObj["code"] || last["message"] != errObj["message"] {
		t.Fatalf("error event = %v", last)
	}
	if _, err := r.g.Response(context.Background(), r.caller, failed["id"].(string)); problem.From(err).Status() != http.StatusNotFound {
		t.Fatalf("a failed response is stored: %v", err)
	}
	if cs := r.calls(); len(cs) != 1 || cs[0].Status != models.StatusCut || cs[0].Operation != models.OpResponses {
		t.Fatalf("calls = %+v", cs)
	}
}

// A stream that stalls (no event for the deployment's timeout) is cut:
// response.failed and an error event.
func TestResponsesStalledStreamFails(t *testing.T) {
	r := respRig(t, rigOptions{}, models.Deployment{Name: "s", Alias: "chat", UpstreamModel: "stall", InputMicrosPerM: 1, OutputMicrosPerM: 1,
		ContextWindow: 8192, MaxOutputTokens: 64, Timeout: 300 * time.Millisecond, Concurrency: 4, Enabled: true})
	res := r.responses(r.caller, `{"model":"chat","input":"one two three four five six","stream":true}`)
	ns := names(readEvents(t, res.body))
	if len(ns) < 2 || ns[len(ns)-2] != "response.failed" || ns[len(ns)-1] != "error" {
		t.Fatalf("a stalled stream's events = %v", ns)
	}
}

// Stored responses are the caller's own: another key of the tenant, or
// another tenant, finds none of them.
func TestResponsesAreKeptPerTenantAndKey(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "fake"))
	ctx := context.Background()
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"mail margaret.w@example.com"}`))

	sameTenant := admission.Caller{Tenant: r.tenant, Key: keys.Key{ID: "k2", TenantID: r.tenant.ID, Scopes: []string{"model:chat"}}}
	var other tenants.Tenant
	if err := r.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if other, err = tenants.Insert(ctx, tx, "t2", "T2"); err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: other.ID, Period: budgets.Month, LimitMicros: 1_000_000_000, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	otherTenant := admission.Caller{Tenant: other, Key: keys.Key{ID: "k1", TenantID: other.ID, Scopes: []string{"model:chat"}}}
	for name, c := range map[string]admission.Caller{"another key": sameTenant, "another tenant": otherTenant} {
		res := r.responses(c, `{"model":"chat","input":"hi","previous_response_id":"`+o.ID+`"}`)
		if p := problem.From(res.err); res.status != http.StatusNotFound || p.Code != "previous_response_not_found" {
			t.Errorf("%s continues it: %d %v", name, res.status, res.err)
		}
		if _, err := r.g.Response(ctx, c, o.ID); problem.From(err).Status() != http.StatusNotFound {
			t.Errorf("%s reads it: %v", name, err)
		}
		if err := r.g.DeleteResponse(ctx, c, o.ID); problem.From(err).Status() != http.StatusNotFound {
			t.Errorf("%s deletes it: %v", name, err)
		}
	}
	got, err := r.g.Response(ctx, r.caller, o.ID)
	if err != nil {
		t.Fatalf("the owner's GET after the others tried: %v", err)
	}
	// What is stored is redacted, as a Model-calls record is.
	if bytes.Contains(got, []byte("margaret.w@example.com")) {
		t.Fatalf("the stored response holds the e-mail in the clear: %s", got)
	}
	var raw string
	_ = r.db.Read().QueryRow(`SELECT input || output || response FROM model_responses WHERE id = ?`, o.ID).Scan(&raw)
	if raw == "" || strings.Contains(raw, "margaret.w@example.com") {
		t.Fatalf("stored row = %q", raw)
	}
}

// Without a redactor nothing is stored: the response says store false.
func TestResponsesWithoutRedactorAreNotStored(t *testing.T) {
	r := newGWRig(t, rigOptions{}, dep("big", "fake"))
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"hi"}`))
	if o.Store || o.text() != "echo: hi" {
		t.Fatalf("response = %+v", o)
	}
	if _, err := r.g.Response(context.Background(), r.caller, o.ID); problem.From(err).Status() != http.StatusNotFound {
		t.Fatalf("GET = %v", err)
	}
}

// A refusal is a message whose content is a refusal part.
func TestResponsesRefusal(t *testing.T) {
	r := respRig(t, rigOptions{}, dep("big", "refuse"))
	res := r.responses(r.caller, `{"model":"chat","input":"hi"}`)
	var o struct {
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type    string `json:"type"`
				Refusal string `json:"refusal"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(res.body, &o); err != nil {
		t.Fatalf("%v: %d %v", err, res.status, res.err)
	}
	if o.Status != "completed" || len(o.Output) != 1 || o.Output[0].Type != "message" || len(o.Output[0].Content) != 1 ||
		o.Output[0].Content[0].Type != "refusal" || o.Output[0].Content[0].Refusal != "I can't help with that." {
		t.Fatalf("refusal = %s", res.body)
	}
}
