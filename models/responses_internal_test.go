package models

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenhq/warden/admission"
)

// TestChatBody: each Responses request and the chat completion body it
// becomes, member for member.
func TestChatBody(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"text and instructions",
			`{"model":"m","input":"hi","instructions":"be brief","store":true,"max_output_tokens":20,"temperature":0,"metadata":{"a":"b"}}`,
			`{"max_completion_tokens":20,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"metadata":{"a":"b"},"model":"m","temperature":0}`},
		{"items: parts, calls of one turn merged, their outputs",
			`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},` +
				`{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"let me look","annotations":[]}]},` +
				`{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"g","arguments":"{\"x\":1}"},` +
				`{"type":"function_call_output","call_id":"c1","output":"one"},{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"two"}]}]}`,
			`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},` +
				`{"role":"assistant","content":[{"type":"text","text":"let me look"}],"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{\"x\":1}"}}]},` +
				`{"role":"tool","content":"one","tool_call_id":"c1"},{"role":"tool","content":[{"type":"text","text":"two"}],"tool_call_id":"c2"}],"model":"m"}`},
		{"a call without text is an assistant message without content",
			`{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`,
			`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}],"model":"m"}`},
		{"function tools, tool_choice, parallel calls",
			`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true}],` +
				`"tool_choice":{"type":"function","name":"f"},"parallel_tool_calls":false}`,
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","parallel_tool_calls":false,"tool_choice":{"function":{"name":"f"},"type":"function"},` +
				`"tools":[{"function":{"description":"d","name":"f","parameters":{"type":"object"},"strict":true},"type":"function"}]}`},
		{"tool_choice auto without tools is not sent",
			`{"model":"m","input":"hi","tool_choice":"auto","parallel_tool_calls":true}`,
			`{"messages":[{"role":"user","content":"hi"}],"model":"m"}`},
		{"json_schema, verbosity, reasoning effort, stream",
			`{"model":"m","input":"hi","stream":true,"reasoning":{"effort":"low","summary":null},"text":{"verbosity":"low","format":{"type":"json_schema","name":"x","schema":{"type":"object"},"strict":true}}}`,
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","reasoning_effort":"low","response_format":{"json_schema":{"name":"x","schema":{"type":"object"},"strict":true},"type":"json_schema"},"stream":true,"verbosity":"low"}`},
		{"json_object",
			`{"model":"m","input":"hi","text":{"format":{"type":"json_object"}}}`,
			`{"messages":[{"role":"user","content":"hi"}],"model":"m","response_format":{"type":"json_object"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseResponses([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			items, err := inputItems(r.Input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := chatBody(r, nil, items)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			_ = json.Unmarshal(got, &g)
			_ = json.Unmarshal([]byte(tt.want), &w)
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Errorf("chatBody(%s) =\n%s\nwant\n%s", tt.in, gb, wb)
			}
			// What it makes is a chat request the gateway accepts.
			if _, err := parseChat(got); err != nil {
				t.Errorf("the chat body is refused: %v", err)
			}
		})
	}
}

// A chat stream that ends with the gateway's error event (event: error,
// {"error": {...}}) after some text is a failed Response with that
// error's code, even when [DONE] is not the problem.
func TestResponseSinkReadsTheChatErrorEvent(t *testing.T) {
	for _, tt := range []struct{ name, tail, code string }{
		{"error event", "event: error\ndata: {\"error\":{\"message\":\"The model stalled.\",\"type\":\"server_error\",\"code\":\"upstream_stalled\"}}\n\n", "upstream_stalled"},
		{"plain end", "", "upstream_cut"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			resp := &response{req: respRequest{Model: "m", Stream: true}, ID: "resp_x", w: recorderSink{w}, stream: true, keep: true}
			resp.Header().Set("Content-Type", "text/event-stream")
			resp.WriteHeader(http.StatusOK)
			chunk := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half an\"}}]}\n\n"
			// Written in pieces that split lines, as a network may.
			all := chunk + tt.tail
			for i := 0; i < len(all); i += 7 {
				if _, err := resp.Write([]byte(all[i:min(len(all), i+7)])); err != nil {
					t.Fatal(err)
				}
			}
			if err := resp.finish(context.Background(), admission.Caller{}); err != nil {
				t.Fatal(err)
			}
			body := w.Body.String()
			if strings.Contains(body, "response.completed") || !strings.Contains(body, "event: response.failed") ||
				!strings.Contains(body, `"code":"`+tt.code+`"`) || !strings.Contains(body, `"delta":"half an"`) {
				t.Fatalf("events:\n%s", body)
			}
			last := body[strings.LastIndex(strings.TrimSpace(body), "\n\n")+2:]
			if !strings.HasPrefix(last, "event: error\n") {
				t.Fatalf("last event = %q", last)
			}
		})
	}
}

type recorderSink struct{ *httptest.ResponseRecorder }

func (recorderSink) Flush() {}
