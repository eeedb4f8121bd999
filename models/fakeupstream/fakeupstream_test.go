package fakeupstream

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, srv *httptest.Server, body string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res, b.String()
}

func TestFakeUpstream(t *testing.T) {
	f := New()
	srv := httptest.NewServer(f)
	defer srv.Close()
	tests := []struct {
		name, body string
		status     int
		contains   []string
		lacks      string
	}{
		{"echo", `{"model":"m","messages":[{"role":"user","content":"hi you"}]}`, 200,
			[]string{`"content":"echo: hi you"`, `"completion_tokens":3`}, ""},
		{"tool call", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}`, 200,
			[]string{`"tool_calls"`, `"name":"f"`, `"finish_reason":"tool_calls"`}, ""},
		{"stream with usage", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a b"}]}`, 200,
			[]string{`"content":" a"`, `"usage":{`, "data: [DONE]"}, ""},
		{"cut stream", `{"model":"cut","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a b c d"}]}`, 200,
			[]string{`"content":"echo:"`}, "[DONE]"},
		{"500", `{"model":"fail-500","messages":[{"role":"user","content":"x"}]}`, 500, []string{`"type":"server_error"`}, ""},
		{"429", `{"model":"fail-429","messages":[{"role":"user","content":"x"}]}`, 429, []string{"rate_limit_error"}, ""},
		{"400", `{"model":"fail-400","messages":[{"role":"user","content":"x"}]}`, 400, []string{"injected bad request"}, ""},
		{"output cap", `{"model":"m","max_completion_tokens":2,"messages":[{"role":"user","content":"a b c d"}]}`, 200,
			[]string{`"content":"echo: a"`, `"completion_tokens":2`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := post(t, srv, tt.body)
			if res.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d: %s", res.StatusCode, tt.status, body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(body, c) {
					t.Errorf("body lacks %q: %s", c, body)
				}
			}
			if tt.lacks != "" && strings.Contains(body, tt.lacks) {
				t.Errorf("body has %q: %s", tt.lacks, body)
			}
		})
	}
	if f.Requests() != int64(len(tests)) {
		t.Errorf("Requests() = %d, want %d", f.Requests(), len(tests))
	}
}

func TestFakeUpstreamResponses(t *testing.T) {
	f := New()
	srv := httptest.NewServer(f)
	defer srv.Close()
	for _, tt := range []struct {
		name, body string
		status     int
		contains   []string
	}{
		{"echo", `{"model":"m","input":"hi you"}`, 200, []string{`"object":"response"`, `"text":"echo: hi you"`, `"output_tokens":3`}},
		{"function call", `{"model":"m","input":"weather","tools":[{"type":"function","name":"get_weather"}]}`, 200,
			[]string{`"type":"function_call"`, `"name":"get_weather"`, `"call_id":"call_1"`}},
		{"tool result", `{"model":"m","tools":[{"type":"function","name":"get_weather"}],"input":[{"type":"function_call_output","call_id":"call_1","output":"12"}]}`, 200,
			[]string{`"text":"tool said: 12"`}},
		{"stream", `{"model":"m","input":"a b","stream":true}`, 200,
			[]string{"event: response.created", `"delta":" b"`, "event: response.completed", `"output_tokens":3`}},
		{"previous response", `{"model":"m","input":"hi","previous_response_id":"resp_1"}`, 400, []string{"stores none"}},
		{"fail-500", `{"model":"fail-500","input":"hi"}`, 500, []string{"injected failure"}},
		{"fail-400", `{"model":"fail-400","input":"hi"}`, 400, []string{"injected bad request"}},
	} {
		res, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, res.Body)
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("%s = %d %s", tt.name, res.StatusCode, b.String())
		}
		for _, c := range tt.contains {
			if !strings.Contains(b.String(), c) {
				t.Errorf("%s lacks %s: %s", tt.name, c, b.String())
			}
		}
	}
	if seen := f.Seen(); len(seen) != 7 || seen[0].Path != "/responses" || seen[2].LastRole != "function_call_output" {
		t.Errorf("seen = %+v", seen)
	}
}
