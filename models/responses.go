package models

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// The Responses door (POST /v1/responses) is Chat behind a translation:
// the Responses request becomes a Chat Completions body (instructions as
// the system message, the stored context of previous_response_id, the
// input items, the function tools in chat's form) and runs through Chat
// with a sink that turns the chat answer (JSON or the chunk stream) into
// a Response. So routing, fallback, cascade, cache, scopes, limits,
// budgets (the reservation bounds the translated body, context and tool
// descriptions included), redaction and the Model-calls record are
// chat's, unchanged; the call is recorded as OpResponses. An alias whose
// every enabled deployment has the Responses API setting is forwarded as
// Responses instead (native.go).
//
// A response kept (store, the default) is in model_responses under the
// tenant and the key that made it, its input and output items redacted as
// a Model-calls record's prompt is; previous_response_id, GET and DELETE
// find only the caller's own, and the tenant's trace retention deletes
// them.

type operationKey struct{}

// withOperation marks the call Chat records as serving op.
func withOperation(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// operationOf is the operation withOperation put in ctx, or "" (chat).
func operationOf(ctx context.Context) string {
	op, _ := ctx.Value(operationKey{}).(string)
	return op
}

// respRequest is a Responses request as read.
type respRequest struct {
	Model             string            `json:"model"`
	Input             json.RawMessage   `json:"input"`
	Instructions      *string           `json:"instructions"`
	Tools             []json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	Text              *struct {
		Format    json.RawMessage `json:"format"`
		Verbosity json.RawMessage `json:"verbosity"`
	} `json:"text"`
	MaxOutputTokens    *int64          `json:"max_output_tokens"`
	Temperature        json.RawMessage `json:"temperature"`
	TopP               json.RawMessage `json:"top_p"`
	Stream             bool            `json:"stream"`
	Store              *bool           `json:"store"`
	PreviousResponseID string          `json:"previous_response_id"`
	Metadata           json.RawMessage `json:"metadata"`
	User               json.RawMessage `json:"user"`
	SafetyIdentifier   json.RawMessage `json:"safety_identifier"`
	PromptCacheKey     json.RawMessage `json:"prompt_cache_key"`
	ServiceTier        json.RawMessage `json:"service_tier"`
	Reasoning          *struct {
		Effort          json.RawMessage `json:"effort"`
		Summary         json.RawMessage `json:"summary"`
		GenerateSummary json.RawMessage `json:"generate_summary"`
	} `json:"reasoning"`
	Truncation *string  `json:"truncation"`
	Include    []string `json:"include"`
	Background *bool    `json:"background"`
}

// respMembers are the members of a Responses request Warden serves; any
// other is refused by name (built-in tools, background, conversations,
// prompt templates change what the call does or bills).
var respMembers = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"text": true, "max_output_tokens": true, "temperature": true, "top_p": true, "stream": true, "store": true,
	"previous_response_id": true, "metadata": true, "user": true, "safety_identifier": true, "prompt_cache_key": true,
	"service_tier": true, "reasoning": true, "truncation": true, "include": true, "background": true,
	"stream_options": true, // include_obfuscation only pads events; nothing of the answer changes
}

// parseResponses reads and checks a Responses request.
func parseResponses(body []byte) (respRequest, error) {
	var r respRequest
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return r, invalid("The body is not a JSON object.")
	}
	var unknown []string
	for k, v := range all {
		if !respMembers[k] && !isNull(v) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return r, unsupported(fmt.Sprintf("Warden's /v1/responses does not serve %s (docs/models.md).", quoteList(unknown)))
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, invalid("The body is not a JSON Responses request: " + problem.JSONReason(err) + ".")
	}
	switch {
	case r.Model == "":
		return r, invalid("Name the model: \"model\": ALIAS.")
	case r.Background != nil && *r.Background:
		return r, unsupported("\"background\": true is not served: Warden answers while the request is open.")
	case r.Truncation != nil && *r.Truncation != "disabled":
		return r, unsupported("\"truncation\" may only be \"disabled\": Warden does not drop items from the conversation.")
	case len(r.Include) > 0:
		return r, unsupported(fmt.Sprintf("\"include\" is not served (it asks for %s).", quoteList(r.Include)))
	case r.Reasoning != nil && (!isNullOrEmpty(r.Reasoning.Summary) || !isNullOrEmpty(r.Reasoning.GenerateSummary)):
		return r, unsupported("\"reasoning.summary\" is not served: the deployments answer through Chat Completions, which has no reasoning summaries.")
	case r.MaxOutputTokens != nil && *r.MaxOutputTokens < 0:
		return r, invalid("\"max_output_tokens\" cannot be negative.")
	}
	if len(r.Input) == 0 || isNull(r.Input) {
		return r, invalid("Send the input: \"input\": \"text\" or a list of items.")
	}
	return r, nil
}

func isNullOrEmpty(raw json.RawMessage) bool { return len(raw) == 0 || isNull(raw) }

// inputItems are the request's input as items: a string is one user
// message.
func inputItems(input json.RawMessage) ([]json.RawMessage, error) {
	if input[0] == '"' {
		var s string
		if json.Unmarshal(input, &s) != nil {
			return nil, invalid("\"input\" must be text or a list of items.")
		}
		item, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": s})
		return []json.RawMessage{item}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(input, &items) != nil {
		return nil, invalid("\"input\" must be text or a list of items.")
	}
	if len(items) == 0 {
		return nil, invalid("\"input\" is empty: send at least one item.")
	}
	return items, nil
}

// chatMsg is one message of the translated chat conversation.
type chatMsg struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"` // a string, a list of parts, or null
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatPart struct {
	Type    string `json:"type"`
	Text    string `json:"text,omitempty"`
	Refusal string `json:"refusal,omitempty"`
}

// itemMembers are the members each input item type may have.
var itemMembers = map[string]map[string]bool{
	"message":              {"type": true, "role": true, "content": true, "id": true, "status": true},
	"function_call":        {"type": true, "id": true, "call_id": true, "name": true, "arguments": true, "status": true},
	"function_call_output": {"type": true, "id": true, "call_id": true, "output": true, "status": true, "name": true}, // the name is the call's, said again
}

var itemRoles = map[string]bool{"user": true, "system": true, "developer": true, "assistant": true}

// toMessages translates Responses items (the first stored of them the
// context of previous_response_id, then the input) into chat messages.
// What an item holds that chat cannot carry is refused by name; an input
// item is named by its place in the input.
func toMessages(items []json.RawMessage, stored int) ([]chatMsg, error) {
	var out []chatMsg
	for i, raw := range items {
		n := i + 1 - stored // a stored item is numbered from the end of the context: 0, -1, …
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, invalid(fmt.Sprintf("Input item %d is not an object.", n))
		}
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		if typ == "" && m["role"] != nil {
			typ = "message"
		}
		allowed, ok := itemMembers[typ]
		if !ok {
			return nil, unsupported(fmt.Sprintf("Input item %d is of type %q; Warden serves messages, function_call and function_call_output items.", n, clipName(typ)))
		}
		for k, v := range m {
			if !allowed[k] && !isNull(v) {
				return nil, unsupported(fmt.Sprintf("Input item %d (%s) has %q, which Warden does not serve.", n, typ, clipName(k)))
			}
		}
		switch typ {
		case "message":
			var role string
			if json.Unmarshal(m["role"], &role) != nil || !itemRoles[role] {
				return nil, invalid(fmt.Sprintf("Input item %d has no known \"role\" (user, system, developer, assistant).", n))
			}
			content, err := messageContent(n, m["content"])
			if err != nil {
				return nil, err
			}
			out = append(out, chatMsg{Role: role, Content: content})
		case "function_call":
			var fc struct {
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}
			if json.Unmarshal(raw, &fc) != nil || fc.CallID == "" || fc.Name == "" {
				return nil, invalid(fmt.Sprintf("Input item %d (function_call) needs \"call_id\", \"name\" and \"arguments\" (a string).", n))
			}
			tc := chatToolCall{ID: fc.CallID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = fc.Name, fc.Arguments
			// Calls made in one turn are one assistant message in chat.
			if last := len(out) - 1; last >= 0 && out[last].Role == "assistant" {
				out[last].ToolCalls = append(out[last].ToolCalls, tc)
			} else {
				out = append(out, chatMsg{Role: "assistant", ToolCalls: []chatToolCall{tc}})
			}
		case "function_call_output":
			var fo struct {
				CallID string          `json:"call_id"`
				Output json.RawMessage `json:"output"`
			}
			if json.Unmarshal(raw, &fo) != nil || fo.CallID == "" || len(fo.Output) == 0 {
				return nil, invalid(fmt.Sprintf("Input item %d (function_call_output) needs \"call_id\" and \"output\".", n))
			}
			content, err := messageContent(n, fo.Output)
			if err != nil {
				return nil, err
			}
			out = append(out, chatMsg{Role: "tool", ToolCallID: fo.CallID, Content: content})
		}
	}
	return out, nil
}

// messageContent is an item's content in chat's form: text, or text and
// refusal parts.
func messageContent(n int, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, invalid(fmt.Sprintf("Input item %d's content must be text or a list of parts.", n))
		}
		return s, nil
	}
	var parts []struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal string  `json:"refusal"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil, invalid(fmt.Sprintf("Input item %d's content must be text or a list of parts.", n))
	}
	out := make([]chatPart, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			if p.Text == nil {
				return nil, invalid(fmt.Sprintf("Input item %d has a %s part without \"text\".", n, p.Type))
			}
			out = append(out, chatPart{Type: "text", Text: *p.Text})
		case "refusal":
			out = append(out, chatPart{Type: "refusal", Refusal: p.Refusal})
		default:
			return nil, problem.Invalid("unsupported_content", fmt.Sprintf("Input item %d has a content part of type %q, which Warden does not forward: "+
				"its tokens cannot be bounded before the call. Send text parts only.", n, clipName(p.Type)))
		}
	}
	return out, nil
}

// chatTools translates Responses' flat function tools into chat's form.
func chatTools(tools []json.RawMessage) ([]map[string]any, error) {
	var out []map[string]any
	for i, raw := range tools {
		var t map[string]json.RawMessage
		if json.Unmarshal(raw, &t) != nil {
			return nil, invalid(fmt.Sprintf("Tool %d is not an object.", i+1))
		}
		var typ, name string
		_ = json.Unmarshal(t["type"], &typ)
		if typ != "function" {
			return nil, unsupported(fmt.Sprintf("Tool %d is of type %q; Warden serves function tools only (no built-in tools such as web_search).", i+1, clipName(typ)))
		}
		if json.Unmarshal(t["name"], &name) != nil || name == "" {
			return nil, invalid(fmt.Sprintf("Tool %d needs a \"name\".", i+1))
		}
		fn := map[string]json.RawMessage{}
		for k, v := range t {
			switch k {
			case "type":
			case "name", "description", "parameters", "strict":
				if !isNull(v) {
					fn[k] = v
				}
			default:
				if !isNull(v) {
					return nil, unsupported(fmt.Sprintf("Tool %d has %q, which Warden does not serve.", i+1, clipName(k)))
				}
			}
		}
		out = append(out, map[string]any{"type": "function", "function": fn})
	}
	return out, nil
}

// chatToolChoice translates a Responses tool_choice.
func chatToolChoice(raw json.RawMessage) (json.RawMessage, error) {
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil || (s != "auto" && s != "none" && s != "required") {
			return nil, invalid("\"tool_choice\" may be \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"name\":...}.")
		}
		return raw, nil
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Type != "function" || c.Name == "" {
		return nil, unsupported("\"tool_choice\" may name a function tool ({\"type\":\"function\",\"name\":...}); Warden serves no other kind.")
	}
	return json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
}

// chatFormat translates text.format into response_format.
func chatFormat(raw json.RawMessage) (json.RawMessage, error) {
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil {
		return nil, invalid("\"text.format\" must be an object.")
	}
	var typ string
	_ = json.Unmarshal(f["type"], &typ)
	switch typ {
	case "text", "json_object":
		return json.Marshal(map[string]string{"type": typ})
	case "json_schema":
		schema := map[string]json.RawMessage{}
		for k, v := range f {
			switch k {
			case "type":
			case "name", "schema", "description", "strict":
				schema[k] = v
			default:
				return nil, unsupported(fmt.Sprintf("\"text.format\" has %q, which Warden does not serve.", clipName(k)))
			}
		}
		if schema["name"] == nil || schema["schema"] == nil {
			return nil, invalid("A json_schema \"text.format\" needs a \"name\" and a \"schema\".")
		}
		return json.Marshal(map[string]any{"type": "json_schema", "json_schema": schema})
	}
	return nil, unsupported(fmt.Sprintf("\"text.format\" of type %q is not served: text, json_object or json_schema.", clipName(typ)))
}

// chatBody is the Chat Completions body a Responses request (with its
// context items) makes.
func chatBody(r respRequest, history, input []json.RawMessage) ([]byte, error) {
	msgs, err := toMessages(append(append([]json.RawMessage(nil), history...), input...), len(history))
	if err != nil {
		return nil, err
	}
	if r.Instructions != nil && *r.Instructions != "" {
		msgs = append([]chatMsg{{Role: "system", Content: *r.Instructions}}, msgs...)
	}
	if len(msgs) == 0 {
		return nil, invalid("\"input\" is empty: send at least one item.")
	}
	b := map[string]any{"model": r.Model, "messages": msgs}
	if len(r.Tools) > 0 {
		tools, err := chatTools(r.Tools)
		if err != nil {
			return nil, err
		}
		b["tools"] = tools
	}
	// Without tools, "auto" and "none" say nothing, and some upstreams
	// refuse a tool_choice without tools.
	if !isNullOrEmpty(r.ToolChoice) && (len(r.Tools) > 0 || !(string(r.ToolChoice) == `"auto"` || string(r.ToolChoice) == `"none"`)) {
		tc, err := chatToolChoice(r.ToolChoice)
		if err != nil {
			return nil, err
		}
		b["tool_choice"] = tc
	}
	if r.ParallelToolCalls != nil && len(r.Tools) > 0 {
		b["parallel_tool_calls"] = *r.ParallelToolCalls
	}
	if r.Text != nil {
		if !isNullOrEmpty(r.Text.Format) {
			f, err := chatFormat(r.Text.Format)
			if err != nil {
				return nil, err
			}
			b["response_format"] = f
		}
		if !isNullOrEmpty(r.Text.Verbosity) {
			b["verbosity"] = r.Text.Verbosity
		}
	}
	if r.Reasoning != nil && !isNullOrEmpty(r.Reasoning.Effort) {
		b["reasoning_effort"] = r.Reasoning.Effort
	}
	if r.MaxOutputTokens != nil {
		b["max_completion_tokens"] = *r.MaxOutputTokens
	}
	if r.Stream {
		b["stream"] = true
	}
	for k, v := range map[string]json.RawMessage{"temperature": r.Temperature, "top_p": r.TopP, "metadata": r.Metadata, "user": r.User,
		"safety_identifier": r.SafetyIdentifier, "prompt_cache_key": r.PromptCacheKey, "service_tier": r.ServiceTier} {
		if !isNullOrEmpty(v) {
			b[k] = v
		}
	}
	return json.Marshal(b)
}

// maxChain bounds how many stored responses a previous_response_id walks
// back through; the 4 MiB bound of the translated body bounds it too.
const maxChain = 1000

// contextOf is the conversation a previous response continues: the input
// and output items of it and of its own previous responses, oldest
// first. Only the caller's own responses are found; one missing from the
// chain (deleted, or past retention) is not found either: its context
// would be silently lost.
func (g *Gateway) contextOf(ctx context.Context, caller admission.Caller, id string) ([]json.RawMessage, error) {
	var turns [][]json.RawMessage
	size := 0
	for next, depth := id, 0; next != ""; depth++ {
		if depth >= maxChain {
			return nil, invalid(fmt.Sprintf("The conversation of %s is more than %d responses long.", clipName(id), maxChain))
		}
		var prev, in, out string
		err := g.db.Read().QueryRowContext(ctx, `SELECT previous_id, input, output FROM model_responses WHERE id = ? AND tenant_id = ? AND key_id = ?`,
			next, caller.Tenant.ID, caller.Key.ID).Scan(&prev, &in, &out)
		if errors.Is(err, sql.ErrNoRows) {
			msg := "There is no response " + clipName(id) + " (previous_response_id) for this key."
			if next != id {
				msg = "Response " + clipName(id) + " continues " + clipName(next) + ", which is no longer stored."
			}
			return nil, problem.NotFound("previous_response_not_found", msg)
		}
		if err != nil {
			return nil, g.storageProblem("Stored responses cannot be read right now.", err)
		}
		size += len(in) + len(out)
		if size > maxBody {
			return nil, invalid("The conversation of previous_response_id is larger than 4 MiB.")
		}
		var ins, outs []json.RawMessage
		if json.Unmarshal([]byte(in), &ins) != nil || json.Unmarshal([]byte(out), &outs) != nil {
			return nil, problem.Internal(fmt.Errorf("stored response %s is not readable", next))
		}
		turns = append(turns, append(ins, outs...))
		next = prev
	}
	var all []json.RawMessage
	for i := len(turns) - 1; i >= 0; i-- {
		all = append(all, turns[i]...)
	}
	return all, nil
}

func (g *Gateway) storageProblem(msg string, err error) error {
	if g.db.NotAnswering(err) {
		return g.db.StorageNotAnswering(msg, err)
	}
	return problem.Unavailable("unavailable", msg, time.Second).Wrap(err)
}

// Responses serves POST /v1/responses for caller (see the top of this
// file). As Chat, it returns a *problem.Error before the first byte is
// written and nil after.
func (g *Gateway) Responses(ctx context.Context, caller admission.Caller, body []byte, w Sink) error {
	if len(body) > maxBody {
		return invalid("The request is larger than 4 MiB.")
	}
	r, err := parseResponses(body)
	if err != nil {
		return err
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	ctx = g.withRecorder(ctx, caller.Tenant.ID, all["tools"])
	input, err := inputItems(r.Input)
	if err != nil {
		return err
	}
	var history []json.RawMessage
	if r.PreviousResponseID != "" {
		if history, err = g.contextOf(ctx, caller, r.PreviousResponseID); err != nil {
			return err
		}
	}
	chat, err := chatBody(r, history, input)
	if err != nil {
		return err
	}
	// An alias whose every enabled deployment serves Responses is
	// forwarded as Responses (native.go); any other is translated, so a
	// fallback never changes protocol within a call.
	if native, err := allNative(ctx, g.db.Read(), r.Model); err == nil && native {
		if deps, err := For(ctx, g.db.Read(), g.sealer, r.Model); err == nil && nativeAlias(deps) {
			return g.responsesNative(ctx, caller, body, r, history, input, deps, w)
		}
	}
	now := g.now().UTC()
	resp := &response{g: g, req: r, ID: "resp_" + store.NewID(), created: now, CreatedAt: now.Unix(), input: input, w: w, stream: r.Stream,
		keep: r.Store == nil || *r.Store}
	if err := g.Chat(withOperation(ctx, OpResponses), caller, chat, resp); err != nil {
		return err
	}
	return resp.finish(ctx, caller)
}

// response is a Response being made from a chat answer: the sink Chat
// writes to.
type response struct {
	g         *Gateway
	req       respRequest
	ID        string
	created   time.Time
	CreatedAt int64 // Unix seconds, as OpenAI's created_at
	input     []json.RawMessage
	keep      bool // asked to be stored
	stored    bool // stored: it may be continued and read back

	w      Sink
	stream bool
	status int
	body   bytes.Buffer // a non-streamed answer; a stream's unread part line

	// What the answer is, as it is read.
	output       []*outItem
	usage        *chatUsage
	done         bool   // the chat stream ended with [DONE]
	finishReason string // the chat finish reason
	errCode      string // the error the chat stream ended with
	errMsg       string

	seq      int
	text     *outItem         // the open message item of a stream
	tools    map[int]*outItem // a stream's function calls by chat index
	lastTool *outItem
	writeErr error
}

type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// outItem is one output item: a message or a function call.
type outItem struct {
	index     int
	Type      string
	ID        string
	Status    string
	Parts     []*outPart // a message's
	CallID    string     // a function call's
	Name      string
	Arguments strings.Builder
	closed    bool
}

type outPart struct {
	Type string // output_text or refusal
	Text strings.Builder
}

func (p *outPart) json() map[string]any {
	if p.Type == "refusal" {
		return map[string]any{"type": "refusal", "refusal": p.Text.String()}
	}
	return map[string]any{"type": "output_text", "text": p.Text.String(), "annotations": []any{}, "logprobs": []any{}}
}

func (it *outItem) json() map[string]any {
	if it.Type == "function_call" {
		return map[string]any{"type": "function_call", "id": it.ID, "call_id": it.CallID, "name": it.Name, "arguments": it.Arguments.String(), "status": it.Status}
	}
	parts := make([]any, len(it.Parts))
	for i, p := range it.Parts {
		parts[i] = p.json()
	}
	return map[string]any{"type": "message", "id": it.ID, "status": it.Status, "role": "assistant", "content": parts}
}

func (resp *response) Header() http.Header { return resp.w.Header() }

func (resp *response) WriteHeader(status int) {
	if resp.status != 0 {
		return
	}
	resp.status = status
	if resp.stream && status == http.StatusOK {
		resp.w.WriteHeader(status)
		resp.event("response.created", map[string]any{"response": resp.object("in_progress")})
		resp.event("response.in_progress", map[string]any{"response": resp.object("in_progress")})
	}
}

func (resp *response) Write(p []byte) (int, error) {
	if resp.status == 0 {
		resp.WriteHeader(http.StatusOK)
	}
	resp.body.Write(p)
	if !resp.stream {
		return len(p), nil
	}
	// Whole lines are read as they come; a chunk's data is one line.
	for {
		line, err := resp.body.ReadBytes('\n')
		if err != nil {
			resp.body.Reset()
			resp.body.Write(line)
			break
		}
		resp.line(bytes.TrimSpace(line))
	}
	if resp.writeErr != nil {
		return 0, resp.writeErr
	}
	return len(p), nil
}

func (resp *response) Flush() {
	if resp.stream {
		resp.w.Flush()
	}
}

// event writes one Responses stream event.
func (resp *response) event(typ string, payload map[string]any) {
	if resp.writeErr != nil {
		return
	}
	payload["type"] = typ
	payload["sequence_number"] = resp.seq
	resp.seq++
	b, _ := json.Marshal(payload)
	if _, err := fmt.Fprintf(resp.w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
		resp.writeErr = err
	}
}

// chatChunk is what is read of a chat stream's chunk (or its error).
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// line reads one line of the chat stream.
func (resp *response) line(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		resp.done = true
		return
	}
	var c chatChunk
	if json.Unmarshal(data, &c) != nil {
		return
	}
	if c.Error != nil {
		resp.errMsg = c.Error.Message
		resp.errCode, _ = c.Error.Code.(string)
		return
	}
	if c.Usage != nil {
		resp.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != "" {
			resp.finishReason = ch.FinishReason
		}
		if ch.Delta.Content != "" {
			resp.textDelta("output_text", ch.Delta.Content)
		}
		if ch.Delta.Refusal != "" {
			resp.textDelta("refusal", ch.Delta.Refusal)
		}
		for _, tc := range ch.Delta.ToolCalls {
			resp.toolDelta(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
	}
}

func (resp *response) newItem(typ, prefix string) *outItem {
	it := &outItem{index: len(resp.output), Type: typ, ID: prefix + store.NewID(), Status: "in_progress"}
	resp.output = append(resp.output, it)
	return it
}

func (resp *response) textDelta(kind, delta string) {
	if resp.lastTool != nil {
		resp.closeItem(resp.lastTool)
		resp.lastTool = nil
	}
	it := resp.text
	if it == nil {
		it = resp.newItem("message", "msg_")
		resp.text = it
		resp.event("response.output_item.added", map[string]any{"output_index": it.index, "item": it.json()})
	}
	if len(it.Parts) == 0 || it.Parts[len(it.Parts)-1].Type != kind {
		if len(it.Parts) > 0 {
			resp.closePart(it, len(it.Parts)-1)
		}
		it.Parts = append(it.Parts, &outPart{Type: kind})
		resp.event("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": it.index, "content_index": len(it.Parts) - 1,
			"part": it.Parts[len(it.Parts)-1].json()})
	}
	p := it.Parts[len(it.Parts)-1]
	p.Text.WriteString(delta)
	typ := "response.output_text.delta"
	payload := map[string]any{"item_id": it.ID, "output_index": it.index, "content_index": len(it.Parts) - 1, "delta": delta}
	if kind == "refusal" {
		typ = "response.refusal.delta"
	} else {
		payload["logprobs"] = []any{}
	}
	resp.event(typ, payload)
}

func (resp *response) closePart(it *outItem, i int) {
	p := it.Parts[i]
	if p.Type == "refusal" {
		resp.event("response.refusal.done", map[string]any{"item_id": it.ID, "output_index": it.index, "content_index": i, "refusal": p.Text.String()})
	} else {
		resp.event("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": it.index, "content_index": i, "text": p.Text.String(), "logprobs": []any{}})
	}
	resp.event("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": it.index, "content_index": i, "part": p.json()})
}

func (resp *response) toolDelta(index int, id, name, args string) {
	if resp.tools == nil {
		resp.tools = map[int]*outItem{}
	}
	if resp.text != nil {
		resp.closeItem(resp.text)
		resp.text = nil
	}
	it := resp.tools[index]
	if it == nil {
		if resp.lastTool != nil {
			resp.closeItem(resp.lastTool)
		}
		it = resp.newItem("function_call", "fc_")
		it.CallID, it.Name = id, name
		resp.tools[index] = it
		resp.lastTool = it
		resp.event("response.output_item.added", map[string]any{"output_index": it.index, "item": it.json()})
	}
	if args != "" {
		it.Arguments.WriteString(args)
		if !it.closed {
			resp.event("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": it.index, "delta": args})
		}
	}
}

// closeItem ends an item of a stream with its done events.
func (resp *response) closeItem(it *outItem) {
	if it.closed {
		return
	}
	it.closed = true
	it.Status = "completed"
	if it.Type == "function_call" {
		resp.event("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": it.index, "arguments": it.Arguments.String()})
	} else {
		for i := range it.Parts {
			resp.closePart(it, i)
		}
	}
	resp.event("response.output_item.done", map[string]any{"output_index": it.index, "item": it.json()})
}

// readAnswer reads a non-streamed chat completion into the output.
func (resp *response) readAnswer() error {
	var a struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				Refusal   *string `json:"refusal"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *chatUsage `json:"usage"`
	}
	if err := json.Unmarshal(resp.body.Bytes(), &a); err != nil || len(a.Choices) == 0 {
		return problem.New(problem.KindBadGateway, "upstream_invalid", "The model's answer was not an OpenAI chat completion; nothing of it was passed on.")
	}
	c := a.Choices[0]
	resp.usage, resp.finishReason, resp.done = a.Usage, c.FinishReason, true
	m := c.Message
	hasText := m.Content != nil && *m.Content != ""
	if hasText || (m.Refusal == nil && len(m.ToolCalls) == 0) {
		it := resp.newItem("message", "msg_")
		p := &outPart{Type: "output_text"}
		if m.Content != nil {
			p.Text.WriteString(*m.Content)
		}
		it.Parts = append(it.Parts, p)
	}
	if m.Refusal != nil && *m.Refusal != "" {
		it := resp.newItem("message", "msg_")
		p := &outPart{Type: "refusal"}
		p.Text.WriteString(*m.Refusal)
		it.Parts = append(it.Parts, p)
	}
	for _, tc := range m.ToolCalls {
		it := resp.newItem("function_call", "fc_")
		it.CallID, it.Name = tc.ID, tc.Function.Name
		it.Arguments.WriteString(tc.Function.Arguments)
	}
	for _, it := range resp.output {
		it.Status = "completed"
	}
	return nil
}

// finalStatus is the Response's status from the chat finish reason, and
// why it is incomplete.
func (resp *response) finalStatus() (string, any) {
	switch resp.finishReason {
	case "length":
		return "incomplete", map[string]string{"reason": "max_output_tokens"}
	case "content_filter":
		return "incomplete", map[string]string{"reason": "content_filter"}
	}
	return "completed", nil
}

// object is the Response as the agent receives it.
func (resp *response) object(status string) map[string]any {
	r := resp.req
	out := make([]any, len(resp.output))
	for i, it := range resp.output {
		out[i] = it.json()
	}
	tools := []any{}
	for _, t := range r.Tools {
		tools = append(tools, t)
	}
	text := map[string]any{"format": map[string]string{"type": "text"}}
	if r.Text != nil && !isNullOrEmpty(r.Text.Format) {
		text["format"] = r.Text.Format
	}
	if r.Text != nil && !isNullOrEmpty(r.Text.Verbosity) {
		text["verbosity"] = r.Text.Verbosity
	}
	var toolChoice any = "auto"
	if !isNullOrEmpty(r.ToolChoice) {
		toolChoice = r.ToolChoice
	}
	metadata := any(map[string]any{})
	if !isNullOrEmpty(r.Metadata) {
		metadata = r.Metadata
	}
	var prev any
	if r.PreviousResponseID != "" {
		prev = r.PreviousResponseID
	}
	reasoning := map[string]any{"effort": nil, "summary": nil}
	if r.Reasoning != nil && !isNullOrEmpty(r.Reasoning.Effort) {
		reasoning["effort"] = r.Reasoning.Effort
	}
	o := map[string]any{
		"id": resp.ID, "object": "response", "created_at": resp.CreatedAt, "status": status, "background": false,
		"error": nil, "incomplete_details": nil, "instructions": r.Instructions, "max_output_tokens": r.MaxOutputTokens,
		"model": r.Model, "output": out, "parallel_tool_calls": r.ParallelToolCalls == nil || *r.ParallelToolCalls,
		"previous_response_id": prev, "reasoning": reasoning, "store": resp.keep,
		"temperature": rawOr(r.Temperature, 1), "top_p": rawOr(r.TopP, 1), "text": text, "tool_choice": toolChoice, "tools": tools,
		"truncation": "disabled", "usage": nil, "metadata": metadata,
	}
	if status != "in_progress" {
		o["store"] = resp.stored
	}
	if status == "incomplete" {
		_, o["incomplete_details"] = resp.finalStatus()
	}
	if !isNullOrEmpty(r.User) {
		o["user"] = r.User
	}
	if u := resp.usage; u != nil && status != "in_progress" {
		var cached, reasoningTokens int64
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		if u.CompletionTokensDetails != nil {
			reasoningTokens = u.CompletionTokensDetails.ReasoningTokens
		}
		o["usage"] = map[string]any{"input_tokens": u.PromptTokens, "input_tokens_details": map[string]int64{"cached_tokens": cached},
			"output_tokens": u.CompletionTokens, "output_tokens_details": map[string]int64{"reasoning_tokens": reasoningTokens},
			"total_tokens": u.PromptTokens + u.CompletionTokens}
	}
	return o
}

func rawOr(raw json.RawMessage, def any) any {
	if isNullOrEmpty(raw) {
		return def
	}
	return raw
}

// Codes of a Response that failed mid-stream.
const (
	codeStreamCut = "upstream_cut"
)

// finish ends the Response once Chat has written the chat answer: a whole
// answer (or a stream that ended with [DONE]) is stored when asked and
// then sent (or its completed event); a stream that ended without [DONE]
// ends in response.failed and an error event, never response.completed.
func (resp *response) finish(ctx context.Context, caller admission.Caller) error {
	if !resp.stream {
		if err := resp.readAnswer(); err != nil {
			return err
		}
		status, _ := resp.finalStatus()
		resp.store(ctx, caller, status)
		b, _ := json.Marshal(resp.object(status))
		resp.w.Header().Set("Content-Type", "application/json")
		resp.w.WriteHeader(http.StatusOK)
		_, _ = resp.w.Write(b)
		return nil
	}
	if resp.writeErr != nil {
		return nil // the agent has gone
	}
	if resp.body.Len() > 0 {
		resp.line(bytes.TrimSpace(resp.body.Bytes()))
		resp.body.Reset()
	}
	if !resp.done || resp.errMsg != "" {
		code, msg := resp.errCode, resp.errMsg
		if code == "" {
			code = codeStreamCut
		}
		if msg == "" {
			msg = "The model's stream ended before its answer was complete; what arrived is cut."
		}
		for _, it := range resp.output {
			if !it.closed {
				it.Status = "incomplete"
			}
		}
		resp.failStream(resp.object("failed"), code, msg)
		return nil
	}
	for _, it := range resp.output {
		resp.closeItem(it)
	}
	status, _ := resp.finalStatus()
	resp.store(ctx, caller, status)
	o := resp.object(status)
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	resp.event(typ, map[string]any{"response": o})
	resp.w.Flush()
	return nil
}

// failStream ends a Responses stream that did not finish: o (the
// Response so far) as status failed with its error, in response.failed,
// then the error event.
func (resp *response) failStream(o map[string]any, code, msg string) {
	o["status"] = "failed"
	o["error"] = map[string]string{"code": code, "message": msg}
	resp.event("response.failed", map[string]any{"response": o})
	// The event is OpenAI's; its "error" member is also what OpenAI's
	// SDKs raise on in a stream (openai-go, openai-node), so a client
	// that reads events one by one cannot take the cut for an end.
	resp.event("error", map[string]any{"code": code, "message": msg, "param": nil,
		"error": map[string]any{"type": "server_error", "code": code, "message": msg}})
	resp.w.Flush()
}

// store keeps the Response, when asked and when the tenant keeps
// content, its items redacted. A Response that cannot be stored is still
// answered (it is paid for), with store false.
func (resp *response) store(ctx context.Context, caller admission.Caller, status string) {
	if !resp.keep {
		return
	}
	out := make([]map[string]any, len(resp.output))
	for i, it := range resp.output {
		out[i] = it.json()
	}
	outRaw, _ := json.Marshal(out)
	o := resp.object(status)
	delete(o, "output")
	resp.stored = resp.g.keepResponse(ctx, caller, resp.ID, resp.req.PreviousResponseID, resp.input, outRaw, o, resp.created)
}

// keepResponse stores a Response (id, continuing prev) for caller when
// the tenant keeps content and there is a redactor: its input items, its
// output items (a JSON list) and the response object o without its
// output, each redacted. It reports whether it was stored.
func (g *Gateway) keepResponse(ctx context.Context, caller admission.Caller, id, prev string, input []json.RawMessage, output []byte, o map[string]any, created time.Time) bool {
	if g.redactor == nil {
		return false
	}
	// The answer is paid for and sent: an agent gone now still finds it.
	ctx = context.WithoutCancel(ctx)
	settings, err := TenantSettingsOf(ctx, g.db.Read(), caller.Tenant.ID)
	if err != nil || settings.Content == ContentNone {
		return false
	}
	rc := g.recorderOf(ctx)
	inRaw, _ := json.Marshal(input)
	in, err1 := rc.red.JSON(rc.declare(ctx, inRaw))
	outRed, err2 := rc.red.JSON(rc.declare(ctx, output))
	o["store"] = true
	objRaw, _ := json.Marshal(o)
	obj, err3 := rc.red.JSON(objRaw)
	if err := errors.Join(err1, err2, err3); err != nil {
		g.log.ErrorContext(ctx, "could not redact a response to store it", "response", id, "err", err)
		return false
	}
	err = g.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO model_responses (id, tenant_id, key_id, previous_id, input, output, response, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, caller.Tenant.ID, caller.Key.ID, prev,
			string(in), string(outRed), string(obj), store.FormatTime(created))
		return err
	})
	if err != nil {
		g.log.ErrorContext(ctx, "could not store a response", "response", id, "err", err)
		return false
	}
	return true
}

func responseNotFound(id string) error {
	return problem.NotFound("response_not_found", "There is no response "+clipName(id)+" for this key.")
}

// Response is GET /v1/responses/{id}: the caller's stored Response, as
// stored (redacted).
func (g *Gateway) Response(ctx context.Context, caller admission.Caller, id string) ([]byte, error) {
	var obj, out string
	err := g.db.Read().QueryRowContext(ctx, `SELECT response, output FROM model_responses WHERE id = ? AND tenant_id = ? AND key_id = ?`,
		id, caller.Tenant.ID, caller.Key.ID).Scan(&obj, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, responseNotFound(id)
	}
	if err != nil {
		return nil, g.storageProblem("Stored responses cannot be read right now.", err)
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &o); err != nil {
		return nil, problem.Internal(fmt.Errorf("stored response %s: %w", id, err))
	}
	o["output"] = json.RawMessage(out)
	o["id"], _ = json.Marshal(id)
	return json.Marshal(o)
}

// DeleteResponse is DELETE /v1/responses/{id}: the caller's stored
// Response is deleted; a response that continues it can no longer be
// continued (its context is gone).
func (g *Gateway) DeleteResponse(ctx context.Context, caller admission.Caller, id string) error {
	var n int64
	err := g.db.Transact(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM model_responses WHERE id = ? AND tenant_id = ? AND key_id = ?`, id, caller.Tenant.ID, caller.Key.ID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return g.storageProblem("Stored responses cannot be deleted right now.", err)
	}
	if n == 0 {
		return responseNotFound(id)
	}
	return nil
}

// DeleteResponsesOlderThan deletes a tenant's stored responses created
// before cutoff (the tenant's trace retention).
func DeleteResponsesOlderThan(ctx context.Context, tx *store.Tx, tenantID string, cutoff time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM model_responses WHERE tenant_id = ? AND created_at < ?`, tenantID, store.FormatTime(cutoff))
	if err != nil {
		return 0, fmt.Errorf("delete old responses: %w", err)
	}
	return res.RowsAffected()
}
