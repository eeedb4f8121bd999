package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// RefundAgent is the upstream model id of a scripted refund agent, for the
// example agent under examples/openai-agents-refund. It plays three turns,
// each decided by the request alone:
//
//  1. no tool result yet: a call to lookup_order (or SERVER__lookup_order,
//     as Warden's /mcp door names an MCP server's tool) with the first
//     order id (ORD-1234) of the last user message;
//  2. after lookup_order's result (a JSON object with order_id,
//     amount_minor, currency and account_last4): a call to the offered tool
//     whose name contains "refund", for the whole amount paid, with the
//     user's message as the reason; when that tool declares its
//     parameters' properties, only the arguments it declares are sent (an
//     MCP tool's schema usually allows no others);
//  3. after the refund tool's result: the text "Refund outcome: " and that
//     result.
//
// A turn it cannot play (no order id, no such tool, a lookup it cannot
// read) answers in text instead, saying why.
const RefundAgent = "refund-agent"

// Call ids of the refund agent's tool calls; a tool result names the call
// it answers, so they tell the turns apart.
const (
	refundAgentLookupCall = "call_lookup_order"
	refundAgentRefundCall = "call_refund"
)

var orderIDPattern = regexp.MustCompile(`ORD-[0-9]{4,}`)

func (s *Server) refundAgent(w http.ResponseWriter, req request) {
	lastUser := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			lastUser = text(m.Content)
		}
	}
	offered := func(match func(string) bool) string {
		for _, t := range req.Tools {
			if match(t.Function.Name) {
				return t.Function.Name
			}
		}
		return ""
	}
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == "tool" && last.ToolCallID == refundAgentRefundCall:
		answerScripted(w, req, "Refund outcome: "+text(last.Content), "", "", nil)
	case last.Role == "tool" && last.ToolCallID == refundAgentLookupCall:
		var order struct {
			OrderID      string `json:"order_id"`
			AmountMinor  *int64 `json:"amount_minor"`
			Currency     string `json:"currency"`
			AccountLast4 string `json:"account_last4"`
		}
		refund := offered(func(n string) bool { return strings.Contains(n, "refund") })
		if err := json.Unmarshal([]byte(text(last.Content)), &order); err != nil || order.OrderID == "" || order.AmountMinor == nil {
			answerScripted(w, req, "I could not read the order: "+text(last.Content), "", "", nil)
			return
		}
		if refund == "" {
			answerScripted(w, req, "I have no tool to refund with.", "", "", nil)
			return
		}
		args := map[string]any{
			"order_id": order.OrderID, "amount_minor": *order.AmountMinor, "currency": order.Currency,
			"account": order.AccountLast4, "reason": lastUser}
		if declared := declaredParams(req, refund); declared != nil {
			for k := range args {
				if !declared[k] {
					delete(args, k)
				}
			}
		}
		answerScripted(w, req, "", refund, refundAgentRefundCall, args)
	default:
		id := orderIDPattern.FindString(lastUser)
		lookup := offered(func(n string) bool { return n == "lookup_order" || strings.HasSuffix(n, "__lookup_order") })
		switch {
		case id == "":
			answerScripted(w, req, "Which order? Name it like ORD-1008.", "", "", nil)
		case lookup == "":
			answerScripted(w, req, "I have no tool to look orders up with.", "", "", nil)
		default:
			answerScripted(w, req, "", lookup, refundAgentLookupCall, map[string]any{"order_id": id})
		}
	}
}

// declaredParams is the set of properties tool's parameters declare, or
// nil when it declares none (then any argument goes).
func declaredParams(req request, tool string) map[string]bool {
	for _, t := range req.Tools {
		if t.Function.Name != tool {
			continue
		}
		var p struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(t.Function.Parameters, &p) != nil || len(p.Properties) == 0 {
			return nil
		}
		declared := map[string]bool{}
		for k := range p.Properties {
			declared[k] = true
		}
		return declared
	}
	return nil
}

// answerScripted answers with content, or with one call of tool (when tool
// is not empty), as a completion or as a stream, with usage.
func answerScripted(w http.ResponseWriter, req request, content, tool, callID string, args any) {
	promptChars := 0
	for _, m := range req.Messages {
		promptChars += len(text(m.Content)) + 4
	}
	prompt, completion := promptChars/4+1, len(strings.Fields(content))
	var call map[string]any
	if tool != "" {
		a, _ := json.Marshal(args)
		call = map[string]any{"id": callID, "type": "function", "function": map[string]any{"name": tool, "arguments": string(a)}}
		completion = len(a)/4 + 1
	}
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	id := "chatcmpl-fake-refund"
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": content}
		finish := "stop"
		if call != nil {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any, u any) {
		choices := []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		if u != nil {
			choices = []any{}
		}
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model, "choices": choices, "usage": u})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if call != nil {
		call["index"] = 0
		send(map[string]any{"tool_calls": []any{call}}, nil, nil)
		send(map[string]any{}, "tool_calls", nil)
	} else {
		send(map[string]any{"content": content}, nil, nil)
		send(map[string]any{}, "stop", nil)
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(nil, nil, usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
