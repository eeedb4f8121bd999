package fakeupstream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// respRequest is what the fake reads of a Responses request.
type respRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	Stream             bool            `json:"stream"`
	Store              *bool           `json:"store"`
	PreviousResponseID string          `json:"previous_response_id"`
	MaxOutputTokens    int             `json:"max_output_tokens"`
	Tools              []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

type respItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content any             `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// responses answers POST …/responses as "any id" answers a chat
// completion (and fail-500, fail-429, fail-400, cut and stall as they
// do): "echo: " + the last user message, a function_call to the first
// tool offered when the last input item is not a function_call_output,
// "tool said: " + the output when it is. It holds no responses: a
// previous_response_id is refused (400), as an upstream that never stored
// it would.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	raw, err := io.ReadAll(r.Body)
	var req respRequest
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON")
		return
	}
	var items []respItem
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		items = []respItem{{Type: "message", Role: "user", Content: one}}
	} else if json.Unmarshal(req.Input, &items) != nil {
		fail(w, http.StatusBadRequest, "invalid_request_error", "input is neither text nor items")
		return
	}
	last := ""
	if len(items) > 0 {
		last = items[len(items)-1].Type
		if last == "" || last == "message" {
			last = items[len(items)-1].Role
		}
	}
	s.mu.Lock()
	s.seen = append(s.seen, Seen{Model: req.Model, Messages: len(items), LastRole: last, Path: "/responses", Body: raw})
	s.mu.Unlock()
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
	case req.PreviousResponseID != "":
		fail(w, http.StatusBadRequest, "invalid_request_error", "previous response not found: this upstream stores none")
		return
	case len(items) == 0:
		fail(w, http.StatusBadRequest, "invalid_request_error", "input is empty")
		return
	}
	lastUser, promptChars := "", len(req.Instructions)
	for _, it := range items {
		t := text(it.Content)
		if it.Type == "function_call_output" {
			var o string
			_ = json.Unmarshal(it.Output, &o)
			t = o
		}
		promptChars += len(t) + 4
		if it.Role == "user" {
			lastUser = t
		}
	}
	for _, t := range req.Tools {
		promptChars += len(t.Name) + 16
	}
	content := "echo: " + lastUser
	if last == "function_call_output" {
		var o string
		_ = json.Unmarshal(items[len(items)-1].Output, &o)
		content = "tool said: " + o
	}
	var call map[string]any
	if len(req.Tools) > 0 && last != "function_call_output" {
		args, _ := json.Marshal(map[string]string{"query": lastUser})
		call = map[string]any{"type": "function_call", "id": "fc_fake", "call_id": "call_1", "name": req.Tools[0].Name,
			"arguments": string(args), "status": "completed"}
	}
	words := strings.Fields(content)
	if req.MaxOutputTokens > 0 && len(words) > req.MaxOutputTokens {
		words = words[:req.MaxOutputTokens]
		content = strings.Join(words, " ")
	}
	completion := len(words)
	if call != nil {
		completion = 8
	}
	prompt := promptChars/4 + 1
	usage := map[string]any{"input_tokens": prompt, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": completion, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": prompt + completion}
	object := func(status string, output []any, u any) map[string]any {
		return map[string]any{"id": "resp_fake", "object": "response", "created_at": 0, "status": status, "model": req.Model,
			"output": output, "usage": u, "store": req.Store == nil || *req.Store, "previous_response_id": nil,
			"max_output_tokens": req.MaxOutputTokens, "error": nil, "incomplete_details": nil}
	}
	message := func(t, status string) map[string]any {
		return map[string]any{"type": "message", "id": "msg_fake", "status": status, "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": t, "annotations": []any{}}}}
	}
	if !req.Stream {
		item := message(content, "completed")
		if call != nil {
			item = call
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(object("completed", []any{item}, usage))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("response.created", map[string]any{"response": object("in_progress", []any{}, nil)})
	send("response.in_progress", map[string]any{"response": object("in_progress", []any{}, nil)})
	var done map[string]any
	if call != nil {
		added := map[string]any{}
		for k, v := range call {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		send("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		send("response.function_call_arguments.delta", map[string]any{"item_id": "fc_fake", "output_index": 0, "delta": call["arguments"]})
		send("response.function_call_arguments.done", map[string]any{"item_id": "fc_fake", "output_index": 0, "arguments": call["arguments"]})
		done = call
	} else {
		send("response.output_item.added", map[string]any{"output_index": 0, "item": message("", "in_progress")})
		send("response.content_part.added", map[string]any{"item_id": "msg_fake", "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for i, wd := range words {
			if req.Model == "cut" && i >= len(words)/2 {
				return // ends without response.completed
			}
			if req.Model == "stall" && i >= len(words)/2 {
				<-r.Context().Done() // says nothing more
				return
			}
			if i > 0 {
				wd = " " + wd
			}
			send("response.output_text.delta", map[string]any{"item_id": "msg_fake", "output_index": 0, "content_index": 0, "delta": wd})
		}
		send("response.output_text.done", map[string]any{"item_id": "msg_fake", "output_index": 0, "content_index": 0, "text": content})
		send("response.content_part.done", map[string]any{"item_id": "msg_fake", "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": content, "annotations": []any{}}})
		done = message(content, "completed")
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	send("response.completed", map[string]any{"response": object("completed", []any{done}, usage)})
}
