package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// The native Responses path. A deployment with ResponsesAPI serves POST
// {base}/responses itself; when every enabled deployment of an alias
// does, the Responses door forwards the request as Responses instead of
// translating it. A mixed alias is translated: a fallback from one
// deployment to the next never changes protocol within a call.
//
// What is forwarded is the request as checked by the translated path's
// own parse (chatBody: what it refuses stays refused), with Warden's
// changes: the model is the deployment's upstream model; the context of
// previous_response_id is resolved by Warden from its own store (the
// same stored, redacted items the translated path sends) into input
// items ahead of the new input, and store is false, so the upstream never
// holds a context Warden cannot bound or see; max_output_tokens is the
// asked cap within the deployment's output cap, always sent. The tenant's
// outbound redaction applies to the input items and instructions.
//
// Money and routing are chat's: the reservation is the dearest
// deployment's bound of the body as forwarded to it (a token a byte, at
// most the context window, plus the output cap), reserved before any
// upstream call and settled to usage.input_tokens and output_tokens (the
// estimate or the bound when they are absent or invalid: charged).
// Deployments are tried in priority order, weighted among equals, each
// within its concurrency; a timeout, connection error, 429, 5xx or an
// answer that is not a Response moves to the next while nothing was sent;
// a 4xx is the upstream's answer to the agent. There is no cascade and no
// cache on this path: the alias's options apply to translated calls.
//
// The answer is the upstream's Response (or its events, passed through as
// they come) naming the alias and Warden's own response id, so GET,
// DELETE and previous_response_id work as on the translated path; it is
// stored in model_responses as that path stores (message and
// function_call items only: no other item could be continued). A stream
// the upstream cuts or stalls ends in response.failed and an error event,
// never response.completed.

// nativeAlias reports whether an alias's enabled deployments all serve
// Responses natively.
func nativeAlias(deps []Deployment) bool {
	for _, d := range deps {
		if !d.ResponsesAPI {
			return false
		}
	}
	return len(deps) > 0
}

// allNative reports whether every enabled deployment of alias (and at
// least one) serves Responses, without reading (and unsealing) them: the
// translated path, which most aliases take, reads them once, in Chat.
func allNative(ctx context.Context, q store.Querier, alias string) (bool, error) {
	var n, native int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(responses_api), 0) FROM model_deployments WHERE alias = ? AND enabled = 1`, alias).Scan(&n, &native)
	return n > 0 && n == native, err
}

// nativeSet are the members of a Responses request Warden sets or
// resolves itself on the native path; the rest are forwarded as sent.
var nativeSet = map[string]bool{"model": true, "input": true, "stream": true, "stream_options": true, "store": true,
	"previous_response_id": true, "max_output_tokens": true, "background": true, "include": true}

// nativeCall is what names a native Response as the agent sees it.
type nativeCall struct {
	id, alias, prev string
	keep            bool // asked to be stored
	created         time.Time
	input           []json.RawMessage // the request's own input items (stored, as the translated path stores)
}

// object is an upstream Response as the agent receives it: Warden's id,
// the alias, the previous response the agent named, and store as said.
func (n *nativeCall) object(raw json.RawMessage, stored bool) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return nil
	}
	o["id"], _ = json.Marshal(n.id)
	o["model"], _ = json.Marshal(n.alias)
	o["previous_response_id"] = json.RawMessage("null")
	if n.prev != "" {
		o["previous_response_id"], _ = json.Marshal(n.prev)
	}
	o["store"], _ = json.Marshal(stored)
	return o
}

// keep stores the Response o (as renamed) with its output items Warden
// serves, and reports whether it did.
func (g *Gateway) keepNative(ctx context.Context, caller admission.Caller, n *nativeCall, o map[string]json.RawMessage) bool {
	if !n.keep || o == nil {
		return false
	}
	obj := make(map[string]any, len(o))
	for k, v := range o {
		if k != "output" {
			obj[k] = v
		}
	}
	return g.keepResponse(ctx, caller, n.id, n.prev, n.input, servedItems(o["output"]), obj, n.created)
}

// servedItems are the output items a continued conversation can carry
// (messages and function calls, with their members the input parse
// reads), as a JSON list.
func servedItems(raw json.RawMessage) []byte {
	var items []map[string]json.RawMessage
	_ = json.Unmarshal(raw, &items)
	out := []map[string]json.RawMessage{}
	for _, it := range items {
		var typ string
		_ = json.Unmarshal(it["type"], &typ)
		if typ != "message" && typ != "function_call" {
			continue
		}
		kept := map[string]json.RawMessage{}
		for k, v := range it {
			if itemMembers[typ][k] {
				kept[k] = v
			}
		}
		out = append(out, kept)
	}
	b, _ := json.Marshal(out)
	return b
}

// responsesUsage reads a Response's usage: nil when it has none, an
// invalid one when its counts are not numbers.
func responsesUsage(raw json.RawMessage) *usage {
	if isNullOrEmpty(raw) {
		return nil
	}
	var u struct {
		InputTokens  *int64 `json:"input_tokens"`
		OutputTokens *int64 `json:"output_tokens"`
	}
	if json.Unmarshal(raw, &u) != nil || u.InputTokens == nil || u.OutputTokens == nil {
		return &usage{PromptTokens: -1, CompletionTokens: -1}
	}
	return &usage{PromptTokens: *u.InputTokens, CompletionTokens: *u.OutputTokens}
}

// isResponse reports whether raw is a Response: a JSON object of object
// "response" with a list of output.
func isResponse(raw []byte) bool {
	var r struct {
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &r) == nil && r.Object == "response" && r.Output != nil
}

// eventData is the data of one server-sent event (its data lines joined),
// nil when it has none.
func eventData(ev []byte) []byte {
	var data [][]byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" ")))
		}
	}
	if data == nil {
		return nil
	}
	return bytes.Join(data, []byte("\n"))
}

// isResponseEvent reports whether a stream's first events are Responses'
// events: the first data is a JSON object whose type is response.….
func isResponseEvent(ev []byte) bool {
	var e struct {
		Type string `json:"type"`
	}
	data := eventData(ev)
	return bytes.HasPrefix(data, []byte("{")) && json.Unmarshal(data, &e) == nil && strings.HasPrefix(e.Type, "response.")
}

// responsesNative serves a Responses request whose alias is all native
// (the top of this file): r as parsed from body, the stored context
// history and the request's input items.
func (g *Gateway) responsesNative(ctx context.Context, caller admission.Caller, body []byte, r respRequest, history, input []json.RawMessage, deps []Deployment, w Sink) (err error) {
	ctx, span := startChat(ctx) // a span as a translated call's (tracing.go)
	defer func() { span.end(err) }()
	span.model(r.Model)
	// The translated path's parse, so that what it refuses is refused here.
	if _, err := chatBody(r, history, input); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return invalid("The body is not a JSON object.")
	}
	fields := make(map[string]json.RawMessage, len(all)+4)
	for k, v := range all {
		if !nativeSet[k] && !isNull(v) {
			fields[k] = v
		}
	}
	if err := checkValues(fields); err != nil {
		return err
	}
	ctx = g.withRecorder(ctx, caller.Tenant.ID, all["tools"])
	items, _ := json.Marshal(append(append([]json.RawMessage{}, history...), input...))
	fields["input"] = items
	tags, err := callTags(ctx, r.Metadata)
	if err != nil {
		return err
	}
	_, settings, limits, allowedHosts, err := callOptions(ctx, g.db.Read(), r.Model, caller.Tenant.ID, caller.Key.ID)
	if err != nil {
		return g.deploymentsUnreadable(err)
	}
	if err := modelAllowed(caller, r.Model); err != nil {
		return err
	}
	asked := int64(0)
	if r.MaxOutputTokens != nil {
		asked = *r.MaxOutputTokens
	}
	keep := settings.Content != ContentNone
	if settings.OutboundRedaction {
		if g.redactor == nil {
			return problem.Unavailable("redaction_unavailable", "This tenant's prompts are redacted before they leave Warden, and no redactor is configured.", 0)
		}
		for _, k := range []string{"input", "instructions"} {
			if v, ok := fields[k]; ok {
				red, err := g.redactor.JSON(v)
				if err != nil {
					return invalid("The input could not be read for redaction.")
				}
				fields[k] = red
			}
		}
	}
	// The bound is of each body as it leaves, model id and cap included.
	deps = weighted(deps)
	bodies := make([][]byte, len(deps))
	var reserve, tokens int64
	for i, d := range deps {
		out := make(map[string]json.RawMessage, len(fields)+4)
		for k, v := range fields {
			out[k] = v
		}
		out["model"], _ = json.Marshal(d.UpstreamModel)
		out["max_output_tokens"], _ = json.Marshal(outputLimit(d, asked))
		out["store"] = json.RawMessage("false")
		if r.Stream {
			out["stream"] = json.RawMessage("true")
		}
		bodies[i], _ = json.Marshal(out)
		in, outTokens := bound(d, len(bodies[i]), asked, 1)
		reserve, tokens = max(reserve, cost(d, in, outTokens)), max(tokens, in+outTokens)
	}

	start := g.now()
	tk, err := g.limits.admit(caller.Key.ID, limits, tokens, start)
	g.rateLimitHeaders(w.Header(), caller.Key.ID, limits, start)
	if err != nil {
		return err
	}
	call := Call{ID: store.NewID(), TenantID: caller.Tenant.ID, KeyID: caller.Key.ID, Alias: r.Model, Stream: r.Stream, Operation: OpResponses,
		CreatedAt: start.UTC(), JourneyID: JourneyOf(ctx), ReservedMicros: reserve, Metadata: g.storedMetadata(tags)}
	w.Header().Set(HeaderRequestID, call.ID)
	span.call = &call
	if keep {
		call.Prompt = g.recorderOf(ctx).storedJSON(ctx, items)
	}
	if err := g.reserve(ctx, &call, tk, start); err != nil {
		return err
	}
	finish := g.finisher(ctx, &call, tk, keep, w, start) // reserve.go

	now := g.now().UTC()
	n := &nativeCall{id: "resp_" + store.NewID(), alias: r.Model, prev: r.PreviousResponseID, keep: r.Store == nil || *r.Store, created: now, input: input}
	protocol := func(first []byte) string {
		switch {
		case r.Stream && !isResponseEvent(first):
			return "not a stream of Responses events"
		case !r.Stream && !isResponse(first):
			return "not a Response"
		}
		return ""
	}
	client := g.clientFor(allowedHosts)
	var last error = problem.Unavailable("upstream_unavailable", "No deployment of "+r.Model+" answered.", time.Second)
	for i, d := range deps {
		inBound, outBound := bound(d, len(bodies[i]), asked, 1)
		inEst := estimateText(int64(len(bodies[i]))) + 16
		t0 := g.now()
		var res *http.Response
		var cancel context.CancelFunc
		var first []byte
		release, ok := g.acquire(d)
		if ok {
			res, cancel, first, err = g.post(ctx, client, d, release, "/responses", bodies[i], r.Stream, protocol)
		} else {
			err = errBusy
		}
		att := Attempt{Deployment: d.Name, LatencyMS: g.now().Sub(t0).Milliseconds()}
		if res != nil {
			att.Status = res.StatusCode
		}
		if err != nil {
			att.Error = err.Error()
			call.Attempts = append(call.Attempts, att)
			if ctx.Err() != nil {
				finish(StatusFailed, 499)
				return problem.Unavailable("cancelled", "The request was cancelled.", 0)
			}
			var bad invalidAnswer
			switch {
			case errors.Is(err, errBusy):
				last = &problem.Error{Kind: problem.KindRateLimited, Code: "rate_limited", Message: "Every deployment of " + r.Model + " is at its concurrency limit.", RetryAfter: time.Second}
			case errors.As(err, &bad):
				last = problem.New(problem.KindBadGateway, "upstream_invalid", "The model's answer was not an OpenAI Response; nothing of it was passed on.")
			default:
				last = problem.Unavailable("upstream_unavailable", "No deployment of "+r.Model+" answered.", time.Second)
			}
			continue
		}
		call.Attempts = append(call.Attempts, att)
		call.Deployment = d.Name
		if res.StatusCode != http.StatusOK {
			// A 4xx: the request itself is at fault; the agent sees the
			// upstream's own answer, and nothing is charged.
			raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			res.Body.Close()
			cancel()
			finish(StatusRejected, res.StatusCode)
			return upstreamRefusal(res.StatusCode, raw)
		}
		if r.Stream {
			defer cancel()
			g.nativeStream(ctx, caller, d, res, cancel, first, streamBounds{in: inBound, out: outBound, inEst: inEst}, &call, keep, n, w, start,
				func(s string) { finish(s, http.StatusOK) })
			return nil
		}
		res.Body.Close()
		cancel()
		var up map[string]json.RawMessage
		_ = json.Unmarshal(first, &up)
		a := &call.Attempts[len(call.Attempts)-1]
		a.InputTokens, a.OutputTokens, a.Usage = charged(responsesUsage(up["usage"]), inBound, outBound, inEst, int64(len(up["output"])))
		a.CostMicros = cost(d, a.InputTokens, a.OutputTokens)
		call.InputTokens, call.OutputTokens, call.Usage, call.CostMicros = a.InputTokens, a.OutputTokens, a.Usage, a.CostMicros
		if keep {
			call.Completion = g.recorderOf(ctx).storedJSON(ctx, up["output"])
		}
		call.TTFT = g.now().Sub(start)
		finish(StatusOK, http.StatusOK)
		var status string
		_ = json.Unmarshal(up["status"], &status)
		o := n.object(first, false)
		if status != "failed" && g.keepNative(ctx, caller, n, o) {
			o["store"] = json.RawMessage("true")
		}
		b, _ := json.Marshal(o)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
		return nil
	}
	finish(StatusFailed, problem.From(last).Status())
	return last
}

// nativeStream passes the upstream's Responses events through as they
// come, each response object in them renamed (nativeCall.object), and
// reads the usage from the last. The call is settled, and the Response
// stored, before the agent sees response.completed. A stream that ends
// without response.completed or response.incomplete (cut, agent gone, or
// no event for the deployment's timeout: stalled) is charged for what
// arrived and, unless the upstream said so itself, ends with the
// translated path's response.failed and error events.
func (g *Gateway) nativeStream(ctx context.Context, caller admission.Caller, d Deployment, res *http.Response, cancel context.CancelFunc, first []byte,
	b streamBounds, call *Call, keep bool, n *nativeCall, w Sink, start time.Time, settle func(status string)) {
	defer res.Body.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	call.TTFT = g.now().Sub(start)
	var br *bufio.Reader
	if bb, ok := res.Body.(bufferedBody); ok {
		br = bb.Reader
	} else {
		br = bufio.NewReader(res.Body)
	}
	var stalled atomic.Bool
	idle := time.AfterFunc(d.Timeout, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	var text strings.Builder
	var textLen int64
	var u *usage
	seq := 0                   // the next sequence number
	var latest json.RawMessage // the last response object the upstream sent
	var output []json.RawMessage
	done := false   // response.completed or response.incomplete
	failed := false // the upstream's own response.failed
	errorSent := false
	gone := false
	account := func(status string) {
		if u == nil {
			status = StatusCut
		}
		att := &call.Attempts[len(call.Attempts)-1]
		if stalled.Load() && !done {
			att.Error = fmt.Sprintf("stalled: no event for %s", d.Timeout)
		}
		att.InputTokens, att.OutputTokens, att.Usage = charged(u, b.in, b.out, b.inEst, textLen)
		att.CostMicros = cost(d, att.InputTokens, att.OutputTokens)
		call.InputTokens, call.OutputTokens, call.Usage, call.CostMicros = att.InputTokens, att.OutputTokens, att.Usage, att.CostMicros
		if keep {
			call.Completion = g.recorderOf(ctx).text(text.String())
		}
		settle(status)
	}
	collect := func(s string) {
		textLen += int64(len(s))
		if keep && text.Len() <= maxStored {
			text.WriteString(s[:min(len(s), maxStored+1-text.Len())])
		}
	}
	// pass reads one event and returns it as the agent receives it.
	pass := func(ev []byte) []byte {
		data := eventData(ev)
		var e map[string]json.RawMessage
		if data == nil || json.Unmarshal(data, &e) != nil || e == nil {
			return ev // comments, keep-alives
		}
		var typ string
		_ = json.Unmarshal(e["type"], &typ)
		var s int
		if json.Unmarshal(e["sequence_number"], &s) == nil {
			seq = s + 1
		}
		switch typ {
		case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
			var delta string
			_ = json.Unmarshal(e["delta"], &delta)
			collect(delta)
		case "response.output_item.done":
			output = append(output, e["item"])
		case "error":
			errorSent = true
		}
		if raw, ok := e["response"]; ok && n.object(raw, false) != nil {
			latest = raw
			var obj struct {
				Usage json.RawMessage `json:"usage"`
			}
			_ = json.Unmarshal(raw, &obj)
			o := n.object(raw, n.keep)
			switch typ {
			case "response.completed", "response.incomplete":
				done = true
				u = responsesUsage(obj.Usage)
				idle.Stop()
				account(StatusOK)
				o["store"] = json.RawMessage("false")
				if g.keepNative(ctx, caller, n, o) {
					o["store"] = json.RawMessage("true")
				}
			case "response.failed":
				failed = true
				u = responsesUsage(obj.Usage)
				o["store"] = json.RawMessage("false")
			}
			e["response"], _ = json.Marshal(o)
		}
		out, _ := json.Marshal(e)
		return []byte("event: " + typ + "\ndata: " + string(out) + "\n\n")
	}
	ev := first
	for {
		if len(ev) > 0 {
			if _, err := w.Write(pass(ev)); err != nil {
				gone = true
				break
			}
			w.Flush()
		}
		if done || errorSent || ctx.Err() != nil {
			break
		}
		idle.Reset(d.Timeout)
		var err error
		ev, err = readEvent(br)
		if err != nil && len(ev) == 0 {
			break
		}
		if stalled.Load() {
			break
		}
	}
	account(StatusCut)
	if done || gone || ctx.Err() != nil {
		return
	}
	// Not finished: the translated path's ending, so every SDK raises.
	resp := &response{w: w, seq: seq}
	code, msg := codeStreamCut, "The model's stream ended before its answer was complete; what arrived is cut."
	if stalled.Load() {
		code, msg = "upstream_stalled", fmt.Sprintf("The model's stream stalled (no event for %s) and was cut, so the answer is incomplete; what arrived was charged.", d.Timeout)
	}
	if failed {
		if !errorSent {
			var f struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(latest, &f) == nil && f.Error != nil && f.Error.Message != "" {
				code, msg = f.Error.Code, f.Error.Message
			}
			resp.event("error", map[string]any{"code": code, "message": msg, "param": nil,
				"error": map[string]any{"type": "server_error", "code": code, "message": msg}})
			w.Flush()
		}
		return
	}
	if errorSent {
		return
	}
	o := map[string]any{}
	for k, v := range n.object(latest, false) {
		o[k] = v
	}
	o["id"], o["model"], o["object"], o["store"] = n.id, n.alias, "response", false
	o["output"] = output
	if output == nil {
		o["output"] = []any{}
	}
	resp.failStream(o, code, msg)
}
