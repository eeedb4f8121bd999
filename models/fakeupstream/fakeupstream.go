// Package fakeupstream is an OpenAI-compatible chat completions (and
// Responses) server that answers deterministically from the request, for
// tests and the demo. The upstream model id chooses its behaviour:
//
//	any id        answers "echo: " + the last user message (a tool call
//	              to the first tool offered, when tools are offered and the
//	              last message is not a tool result)
//	fail-500      500          fail-429   429 with Retry-After
//	fail-400      400 (a bad request, in OpenAI's error shape)
//	slow-MS       waits MS milliseconds, then answers
//	hang          never answers (until the client gives up)
//	cut           streams half the answer and ends without [DONE]
//	stall         streams half the answer, then sends nothing more (until
//	              the client gives up)
//	empty         answers with empty content
//	refuse        answers with a refusal and no content
//	off-schema    answers {"unexpected":true}, whatever the format asked
//	long-N        streams N words, a millisecond apart
//	verbose       answers as many words as the output cap allows (16
//	              without one), in each of the n choices
//	usage:P:C     answers as "any id" does, reporting P prompt and C
//	              completion tokens whatever it used (a lying or buggy
//	              upstream; P and C may be negative)
//	not-json      answers 200 with an HTML page (a server that is no model)
//	refund-agent  looks an order up, refunds it, reports (RefundAgent)
//
// Usage is counted as a real upstream counts it: the prompt from the
// messages' text and every other member it reads (tools, tool_choice,
// response_format), a token per four bytes; the completion per word, in
// each of the n choices asked for.
//
// Scripted tool-calling models (script.go) play an agent's model through
// a whole conversation, deciding from the messages so far:
//
//	script-refund   lookup_order, then issue_refund of the whole order
//	                (from the lookup's result), then a text answer
//	script-outside  asks for send_customer_email, whatever it was offered
//	script-loop     calls the first offered tool again and again
//	router          answers the name of the skill, from the "- name:
//	                description" lines of the system message, that shares
//	                most words with the user's message
//	router-unknown  answers a skill name that was not offered
//
// POST …/embeddings answers a deterministic vector per input
// (embeddings.go). POST …/responses answers OpenAI's Responses API
// natively (responses.go), whole or streamed with its events and usage,
// as "any id" answers above (a function_call when tools are offered and
// the last input item is not a function_call_output), and as fail-500,
// fail-429, fail-400, cut and stall do; it stores nothing, so a
// previous_response_id is refused (400).
//
//	srv := httptest.NewServer(fakeupstream.New())
//	// base URL: srv.URL + "/v1"
package fakeupstream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the fake upstream; it counts the requests it served.
type Server struct {
	requests atomic.Int64

	mu       sync.Mutex
	seen     []Seen
	embedded []string // the text inputs of embeddings requests, as they arrived
}

// Seen is one chat or Responses request as the fake saw it.
type Seen struct {
	Model    string // the upstream model id asked for
	Messages int    // how many messages (Responses: input items) the conversation had
	LastRole string // the role of its last message (Responses: of its last item, or the item's type)
	Path     string // "/chat/completions" or "/responses"
	Body     []byte // the request body as it arrived
}

// Seen lists the chat and Responses requests that arrived, in order.
func (s *Server) Seen() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.seen...)
}

// New returns a fake upstream.
func New() *Server { return &Server{} }

// Requests is how many chat, Responses and embeddings requests arrived.
func (s *Server) Requests() int64 { return s.requests.Load() }

type message struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

type request struct {
	Model         string    `json:"model"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
	MaxTokens           int `json:"max_tokens"`
	N                   int `json:"n"`

	// What else the prompt is made of, as sent: the bytes of tools,
	// tool_choice and response_format.
	promptExtra int
}

// extra is what request reads of the prompt's other members, as sent.
type extra struct {
	Tools          json.RawMessage `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

func text(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}

func fail(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}

// ServeHTTP answers POST …/chat/completions, POST …/responses
// (responses.go), POST …/embeddings (embeddings.go) and GET …/models.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"fake","object":"model","created":0,"owned_by":"fake"}]}`))
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/embeddings") {
		s.embeddings(w, r)
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses") {
		s.responses(w, r)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		fail(w, http.StatusNotFound, "invalid_request_error", "not found")
		return
	}
	s.requests.Add(1)
	var req request
	var ex extra
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil || json.Unmarshal(raw, &ex) != nil {
		fail(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON")
		return
	}
	req.promptExtra = len(ex.Tools) + len(ex.ToolChoice) + len(ex.ResponseFormat)
	s.mu.Lock()
	lastRole := ""
	if len(req.Messages) > 0 {
		lastRole = req.Messages[len(req.Messages)-1].Role
	}
	s.seen = append(s.seen, Seen{Model: req.Model, Messages: len(req.Messages), LastRole: lastRole, Path: "/chat/completions", Body: raw})
	s.mu.Unlock()
	if req.Model == RefundAgent && len(req.Messages) > 0 {
		s.refundAgent(w, req)
		return
	}
	if answer, ok := scripted(req); ok {
		writeScripted(w, req, answer)
		return
	}
	switch {
	case req.Model == "fail-500":
		fail(w, http.StatusInternalServerError, "server_error", "injected failure")
		return
	case req.Model == "fail-429":
		w.Header().Set("Retry-After", "1")
		fail(w, http.StatusTooManyRequests, "rate_limit_error", "injected rate limit")
		return
	case req.Model == "fail-400":
		fail(w, http.StatusBadRequest, "invalid_request_error", "injected bad request")
		return
	case req.Model == "hang":
		<-r.Context().Done()
		return
	case req.Model == "not-json":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>instance metadata: secret-token-from-elsewhere</body></html>"))
		return
	case req.Model == "empty" || req.Model == "refuse" || req.Model == "off-schema":
		s.oddAnswer(w, req)
		return
	case strings.HasPrefix(req.Model, "long-") && req.Stream:
		n, _ := strconv.Atoi(strings.TrimPrefix(req.Model, "long-"))
		s.long(w, r, req, n)
		return
	case strings.HasPrefix(req.Model, "slow-"):
		ms, _ := strconv.Atoi(strings.TrimPrefix(req.Model, "slow-"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if len(req.Messages) == 0 {
		fail(w, http.StatusBadRequest, "invalid_request_error", "messages is empty")
		return
	}
	lastUser, promptChars := "", req.promptExtra
	for _, m := range req.Messages {
		t := text(m.Content)
		promptChars += len(t) + 4
		if m.Role == "user" {
			lastUser = t
		}
	}
	last := req.Messages[len(req.Messages)-1]
	content := "echo: " + lastUser
	if last.Role == "tool" {
		content = "tool said: " + text(last.Content)
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type != "text" {
		b, _ := json.Marshal(map[string]string{"echo": lastUser})
		content = string(b)
	}
	var toolCall map[string]any
	if len(req.Tools) > 0 && last.Role != "tool" {
		args, _ := json.Marshal(map[string]string{"query": lastUser})
		toolCall = map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": req.Tools[0].Function.Name, "arguments": string(args)}}
	}
	limit := req.MaxCompletionTokens
	if limit == 0 {
		limit = req.MaxTokens
	}
	if req.Model == "verbose" {
		toolCall = nil
		content = strings.TrimSpace(strings.Repeat("word ", max(limit, 16)))
	}
	words := strings.Fields(content)
	if limit > 0 && len(words) > limit {
		words = words[:limit]
		content = strings.Join(words, " ")
	}
	choices := max(req.N, 1)
	prompt := promptChars/4 + 1
	completion := len(words)
	if toolCall != nil {
		completion = 8
	}
	completion *= choices
	if p, c, ok := liar(req.Model); ok {
		prompt, completion = p, c
	}
	id := "chatcmpl-fake"
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": content}
		finish := "stop"
		if toolCall != nil {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall}}
			finish = "tool_calls"
		}
		all := make([]any, choices)
		for i := range all {
			all[i] = map[string]any{"index": i, "message": msg, "finish_reason": finish}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": all, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if toolCall != nil {
		// As OpenAI streams a call: its id and name first, then its
		// arguments in small pieces.
		fn := toolCall["function"].(map[string]any)
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil))
		args := fn["arguments"].(string)
		for len(args) > 0 {
			n := min(len(args), 7)
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args[:n]}}}}, nil))
			args = args[n:]
		}
		send(chunk(map[string]any{}, "tool_calls"))
	} else {
		for i, wd := range words {
			if req.Model == "cut" && i >= len(words)/2 {
				return // ends without finish, usage or [DONE]
			}
			if req.Model == "stall" && i >= len(words)/2 {
				<-r.Context().Done() // says nothing more
				return
			}
			if i > 0 {
				wd = " " + wd
			}
			send(chunk(map[string]any{"content": wd}, nil))
		}
		send(chunk(map[string]any{}, "stop"))
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model, "choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// liar reads a usage:P:C model id: the usage it reports.
func liar(model string) (prompt, completion int, ok bool) {
	rest, ok := strings.CutPrefix(model, "usage:")
	if !ok {
		return 0, 0, false
	}
	p, c, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, 0, false
	}
	pi, err1 := strconv.Atoi(p)
	ci, err2 := strconv.Atoi(c)
	return pi, ci, err1 == nil && err2 == nil
}

// oddAnswer answers the empty, refuse and off-schema models.
func (s *Server) oddAnswer(w http.ResponseWriter, req request) {
	msg := map[string]any{"role": "assistant", "content": ""}
	switch req.Model {
	case "refuse":
		msg = map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}
	case "off-schema":
		msg["content"] = `{"unexpected":true}`
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}})
}

// long streams n words a millisecond apart, then its usage and [DONE].
func (s *Server) long(w http.ResponseWriter, r *http.Request, req request, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word\"},\"finish_reason\":null}]}\n\n", req.Model)
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-time.After(time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", req.Model, n, n+10)
	if flusher != nil {
		flusher.Flush()
	}
}
