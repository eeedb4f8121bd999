package models_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
)

// native is dep with the Responses API setting on.
func native(name, upstream string) models.Deployment {
	d := dep(name, upstream)
	d.ResponsesAPI = true
	return d
}

// sentBody is what the fake upstream received in its request i.
func (r *gwRig) sentBody(i int) map[string]json.RawMessage {
	r.t.Helper()
	seen := r.fake.Seen()
	if i >= len(seen) {
		r.t.Fatalf("the upstream saw %d requests, want at least %d", len(seen), i+1)
	}
	var b map[string]json.RawMessage
	if err := json.Unmarshal(seen[i].Body, &b); err != nil {
		r.t.Fatal(err)
	}
	return b
}

func TestNativeResponsesAnswer(t *testing.T) {
	r := respRig(t, rigOptions{}, native("big", "fake"))
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","instructions":"be brief","input":"hello there","max_output_tokens":50}`))
	if !strings.HasPrefix(o.ID, "resp_") || o.ID == "resp_fake" || o.Object != "response" || o.Status != "completed" || o.Model != "chat" ||
		!o.Store || o.text() != "echo: hello there" {
		t.Fatalf("response = %+v", o)
	}
	seen := r.fake.Seen()
	if len(seen) != 1 || seen[0].Path != "/responses" || seen[0].Model != "fake" {
		t.Fatalf("upstream saw %+v", seen)
	}
	sent := r.sentBody(0)
	if string(sent["store"]) != "false" || string(sent["max_output_tokens"]) != "50" || string(sent["instructions"]) != `"be brief"` {
		t.Fatalf("sent %s", r.fake.Seen()[0].Body)
	}
	cs := r.calls()
	if len(cs) != 1 || cs[0].Operation != models.OpResponses || cs[0].Status != models.StatusOK || cs[0].Deployment != "big" ||
		cs[0].Usage != models.UsageReported || cs[0].OutputTokens != 3 {
		t.Fatalf("calls = %+v", cs)
	}
	if o.Usage == nil || o.Usage.InputTokens != cs[0].InputTokens || o.Usage.OutputTokens != 3 {
		t.Fatalf("usage = %+v, call %+v", o.Usage, cs[0])
	}
	if b := r.budget(); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 || cs[0].CostMicros != priced(cs[0].InputTokens, 3) {
		t.Fatalf("budget = %+v, call %+v", b, cs[0])
	}
	// The cap asked for none is the deployment's output cap.
	decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"hi"}`))
	if got := string(r.sentBody(1)["max_output_tokens"]); got != "4096" {
		t.Fatalf("max_output_tokens sent without one asked = %s", got)
	}
	// Stored under Warden's id: GET gives it back with the alias.
	got, err := r.g.Response(context.Background(), r.caller, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g := decodeResp(t, chatResult{status: 200, body: got}); g.ID != o.ID || g.Model != "chat" || g.text() != "echo: hello there" || !g.Store {
		t.Fatalf("GET = %s", got)
	}
}

func TestNativeResponsesStream(t *testing.T) {
	r := respRig(t, rigOptions{}, native("big", "fake"))
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
		if resp, ok := e.data["response"].(map[string]any); ok && (resp["model"] != "chat" || resp["id"] == "resp_fake") {
			t.Fatalf("%s names %v %v", e.name, resp["model"], resp["id"])
		}
	}
	last := evs[len(evs)-1].data["response"].(map[string]any)
	usage, _ := last["usage"].(map[string]any)
	if text.String() != "echo: one two three" || last["status"] != "completed" || usage == nil || usage["output_tokens"] != float64(4) || last["store"] != true {
		t.Fatalf("text %q, completed response %v", text.String(), last)
	}
	if string(r.sentBody(0)["stream"]) != "true" || string(r.sentBody(0)["store"]) != "false" {
		t.Fatalf("sent %s", r.fake.Seen()[0].Body)
	}
	cs := r.calls()
	if len(cs) != 1 || !cs[0].Stream || cs[0].Status != models.StatusOK || cs[0].OutputTokens != 4 || cs[0].Usage != models.UsageReported {
		t.Fatalf("calls = %+v", cs)
	}
	if b := r.budget(); b.SpentMicros != cs[0].CostMicros || b.ReservedMicros != 0 {
		t.Fatalf("budget = %+v", b)
	}
	if got, err := r.g.Response(context.Background(), r.caller, last["id"].(string)); err != nil || !strings.Contains(string(got), "echo: one two three") {
		t.Fatalf("GET of the streamed response = %s, %v", got, err)
	}
}

// previous_response_id is resolved by Warden: the upstream gets the whole
// context as input items, store false, and no previous_response_id (the
// fake refuses one, holding none).
func TestNativeResponsesPreviousResponseID(t *testing.T) {
	r := respRig(t, rigOptions{}, native("big", "fake"))
	tools := `[{"type":"function","name":"get_weather","description":"The weather in a city","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}]`
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","tools":`+tools+`,"input":[{"role":"user","content":[{"type":"input_text","text":"weather in Oslo"}]}]}`))
	if len(o.Output) != 1 || o.Output[0].Type != "function_call" || o.Output[0].Name != "get_weather" || o.Output[0].CallID != "call_1" {
		t.Fatalf("output = %+v", o.Output)
	}
	next := decodeResp(t, r.responses(r.caller, `{"model":"chat","tools":`+tools+`,"previous_response_id":"`+o.ID+`",`+
		`"input":[{"type":"function_call_output","call_id":"call_1","output":"12 degrees"}]}`))
	if next.text() != "tool said: 12 degrees" || next.PreviousResponseID == nil || *next.PreviousResponseID != o.ID {
		t.Fatalf("after the tool result: %+v", next)
	}
	sent := r.sentBody(1)
	var items []map[string]any
	if err := json.Unmarshal(sent["input"], &items); err != nil {
		t.Fatal(err)
	}
	if string(sent["store"]) != "false" || sent["previous_response_id"] != nil || len(items) != 3 ||
		items[0]["role"] != "user" || items[1]["type"] != "function_call" || items[1]["call_id"] != "call_1" || items[1]["name"] != "get_weather" ||
		items[2]["type"] != "function_call_output" || items[2]["output"] != "12 degrees" {
		t.Fatalf("the upstream got %s", r.fake.Seen()[1].Body)
	}
	// A third turn carries the whole chain.
	third := decodeResp(t, r.responses(r.caller, `{"model":"chat","previous_response_id":"`+next.ID+`","input":"thanks"}`))
	if third.text() != "echo: thanks" || r.fake.Seen()[2].Messages != 5 {
		t.Fatalf("third turn %+v, upstream saw %+v", third, r.fake.Seen()[2])
	}
	// What the translated path refuses is refused here, before anything
	// is sent.
	before := r.fake.Requests()
	res := r.responses(r.caller, `{"model":"chat","input":"hi","tools":[{"type":"web_search"}]}`)
	if res.status != http.StatusBadRequest || r.fake.Requests() != before {
		t.Fatalf("a built-in tool = %d %v, upstream requests %d → %d", res.status, res.err, before, r.fake.Requests())
	}
}

// The reservation bounds the body as forwarded, context included: a
// budget that cannot cover it is a 402 and nothing is sent; one that can
// reserves at least the bound of what the upstream received.
func TestNativeResponsesReservation(t *testing.T) {
	r := respRig(t, rigOptions{}, native("big", "fake"))
	ctx := context.Background()
	long := strings.Repeat("context words ", 100<<10/14)
	first := decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"`+long+`","max_output_tokens":10}`))
	body := `{"model":"chat","previous_response_id":"` + first.ID + `","input":"go on","max_output_tokens":10}`
	lower := priced(int64(len(long)), 10)
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
	if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != spent {
		t.Fatalf("budget after the refusal = %+v", b)
	}
	if err := r.db.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Month, LimitMicros: 1_000_000_000, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	decodeResp(t, r.responses(r.caller, body))
	c := r.calls()[0]
	sent := int64(len(r.fake.Seen()[1].Body))
	if bound := priced(sent+16, 10); c.ReservedMicros < bound || c.CostMicros > c.ReservedMicros || c.Operation != models.OpResponses {
		t.Fatalf("reserved %d µ for a forwarded body of %d bytes (bound %d µ), charged %d µ", c.ReservedMicros, sent, bound, c.CostMicros)
	}
}

// A native deployment that fails (5xx, 429) falls over to the next; a 4xx
// is the upstream's answer, not retried.
func TestNativeResponsesFallback(t *testing.T) {
	down := native("down", "fail-500")
	up := native("up", "fake")
	up.Priority = 1
	r := respRig(t, rigOptions{}, down, up)
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"hi"}`))
	if o.text() != "echo: hi" || o.Model != "chat" {
		t.Fatalf("response = %+v", o)
	}
	c := r.calls()[0]
	if c.Deployment != "up" || len(c.Attempts) != 2 || c.Attempts[0].Deployment != "down" || c.Attempts[0].Error != "upstream 500" || c.Attempts[1].Status != 200 {
		t.Fatalf("call = %+v", c)
	}
	if seen := r.fake.Seen(); len(seen) != 2 || seen[0].Path != "/responses" || seen[1].Path != "/responses" {
		t.Fatalf("upstream saw %+v", seen)
	}

	bad := respRig(t, rigOptions{}, native("bad", "fail-400"), up)
	res := bad.responses(bad.caller, `{"model":"chat","input":"hi"}`)
	if res.status != http.StatusBadRequest || !strings.Contains(res.err.Error(), "injected bad request") || len(bad.fake.Seen()) != 1 {
		t.Fatalf("a 4xx = %d %v, upstream saw %d", res.status, res.err, len(bad.fake.Seen()))
	}
	if c := bad.calls()[0]; c.Status != models.StatusRejected || c.CostMicros != 0 {
		t.Fatalf("rejected call = %+v", c)
	}
}

// A native stream the upstream cuts or stalls ends in response.failed and
// an error event, never response.completed, and is charged for what came.
func TestNativeResponsesCutAndStall(t *testing.T) {
	stall := native("s", "stall")
	stall.Timeout = 300 * time.Millisecond
	for _, tt := range []struct {
		name string
		d    models.Deployment
		code string
	}{{"cut", native("c", "cut"), "upstream_cut"}, {"stall", stall, "upstream_stalled"}} {
		r := respRig(t, rigOptions{}, tt.d)
		res := r.responses(r.caller, `{"model":"chat","input":"one two three four five six","stream":true}`)
		evs := readEvents(t, res.body)
		ns := names(evs)
		if len(ns) < 3 || ns[len(ns)-2] != "response.failed" || ns[len(ns)-1] != "error" || strings.Contains(strings.Join(ns, " "), "completed") {
			t.Fatalf("%s: events = %v", tt.name, ns)
		}
		failed := evs[len(evs)-2].data["response"].(map[string]any)
		errObj, _ := failed["error"].(map[string]any)
		if failed["status"] != "failed" || failed["model"] != "chat" || errObj == nil || errObj["code"] != tt.code {
			t.Fatalf("%s: failed response = %v", tt.name, failed)
		}
		if last := evs[len(evs)-1].data; last["code"] != tt.code {
			t.Fatalf("%s: error event = %v", tt.name, last)
		}
		c := r.calls()[0]
		if c.Status != models.StatusCut || c.Usage != models.UsageEstimated || c.OutputTokens == 0 || c.CostMicros == 0 {
			t.Fatalf("%s: call = %+v", tt.name, c)
		}
		if b := r.budget(); b.ReservedMicros != 0 || b.SpentMicros != c.CostMicros {
			t.Fatalf("%s: budget = %+v", tt.name, b)
		}
		id, _ := failed["id"].(string)
		if _, err := r.g.Response(context.Background(), r.caller, id); err == nil {
			t.Fatalf("%s: a failed response was stored", tt.name)
		}
	}
}

// An alias with one deployment without the setting is translated, every
// deployment through Chat Completions.
func TestNativeMixedAliasIsTranslated(t *testing.T) {
	plain := dep("plain", "fake")
	plain.Priority = 1
	r := respRig(t, rigOptions{}, native("big", "fake"), plain)
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","input":"hi"}`))
	if o.text() != "echo: hi" {
		t.Fatalf("response = %+v", o)
	}
	if seen := r.fake.Seen(); len(seen) != 1 || seen[0].Path != "/chat/completions" || seen[0].Model != "fake" {
		t.Fatalf("upstream saw %+v", seen)
	}
}

// A tenant with outbound redaction sends its input items and instructions
// redacted on the native path too; the record keeps them redacted.
func TestNativeResponsesOutboundRedaction(t *testing.T) {
	r := respRig(t, rigOptions{}, native("big", "fake"))
	if _, err := models.SetTenantSettings(context.Background(), r.db, testActor, r.tenant,
		models.TenantSettings{Content: models.ContentRedacted, OutboundRedaction: true}); err != nil {
		t.Fatal(err)
	}
	o := decodeResp(t, r.responses(r.caller, `{"model":"chat","instructions":"answer jane@example.com","input":"write to jane@example.com"}`))
	body := string(r.fake.Seen()[0].Body)
	if strings.Contains(body, "jane@example.com") || !strings.Contains(body, "write to") || !strings.Contains(body, "answer") {
		t.Fatalf("sent upstream %s: want the address redacted", body)
	}
	if strings.Contains(o.text(), "jane@example.com") {
		t.Fatalf("answer %q", o.text())
	}
	if c := r.calls()[0]; strings.Contains(c.Prompt+c.Completion, "jane@example.com") || c.Prompt == "" {
		t.Fatalf("recorded %q / %q", c.Prompt, c.Completion)
	}
}
