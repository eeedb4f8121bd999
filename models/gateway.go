package models

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/agent/gateway"
	"github.com/wardenhq/warden/agent/redact"
	"github.com/wardenhq/warden/agent/seal"
	"github.com/wardenhq/warden/problem"
	"github.com/wardenhq/warden/store"
)

// Sink is where an answer goes: the agent's HTTP response.
type Sink interface {
	Header() http.Header
	WriteHeader(status int)
	Write(p []byte) (int, error)
	Flush()
}

// Gateway calls model deployments for agents (see the package comment).
type Gateway struct {
	db       *store.DB
	sealer   *seal.Sealer
	redactor *redact.Redactor // nil: prompts and completions are not stored at all
	client   *http.Client
	log      *slog.Logger
	now      func() time.Time

	mu    sync.Mutex
	slots map[string]chan struct{} // deployment id → its concurrency slots

	limits *limiter     // keys' model limits, in this process
	cache  *answerCache // answers of aliases with a cache, in this process
}

// NewGateway returns a gateway over db. Without a redactor no prompt or
// completion is stored.
func NewGateway(db *store.DB, sealer *seal.Sealer, redactor *redact.Redactor, log *slog.Logger) *Gateway {
	if log == nil {
		log = slog.Default()
	}
	return &Gateway{db: db, sealer: sealer, redactor: redactor, log: log, now: time.Now, slots: map[string]chan struct{}{},
		limits: newLimiter(), cache: newAnswerCache(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}}}
}

// SetReplicas sets how the gateway learns the number of Warden replicas
// alive (store.Replica.Live): each keeps 1/N of every key's requests and
// tokens a minute and of every deployment's concurrency. Without it N is
// 1.
func (g *Gateway) SetReplicas(live func() int) {
	g.limits.mu.Lock()
	defer g.limits.mu.Unlock()
	g.limits.replicas = live
}

// Models lists the aliases the caller may use (GET /v1/models).
func (g *Gateway) Models(ctx context.Context, caller gateway.Caller) ([]string, error) {
	all, err := Aliases(ctx, g.db.Read())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range all {
		if caller.Key.Allows("model", a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// request is the part of an OpenAI chat request the gateway reads; the
// rest passes through as sent.
type request struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Stream              bool            `json:"stream"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	ResponseFormat      json.RawMessage `json:"response_format"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// maxBody bounds a chat request.
const maxBody = 4 << 20

func invalid(msg string) error { return problem.Invalid("invalid_request", msg) }

// EstimateTokens is a deliberately high estimate of the tokens in a
// prompt: a byte of JSON per token would overcount, a token per three
// bytes plus a margin stays above what tokenizers count for text.
func EstimateTokens(messages []byte) int64 { return int64(len(messages))/3 + 16 }

// cost is tokens at a deployment's prices, rounded up to a micro-unit.
func cost(d Deployment, in, out int64) int64 {
	return ceilDiv(in*d.InputMicrosPerM, 1_000_000) + ceilDiv(out*d.OutputMicrosPerM, 1_000_000)
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// Chat serves one chat completion for caller. Before the first byte is
// written it returns a *problem.Error for the handler to render; after it,
// the answer (or the stream, cut or whole) has been written and it
// returns nil.
//
// Admission: the key's model limits (requests and tokens a minute, the
// tokens estimated here and corrected when the call is settled).
//
// Money: the worst case (estimated prompt plus the output cap, at the
// dearest deployment the call may reach; at every deployment together
// when a cascade may try them all) is reserved in one transaction before
// any upstream call, and settled to the usage the upstream reports in the
// transaction that records the call; a cut stream is charged for what
// arrived. Concurrent calls can never overspend.
//
// Routing: deployments are tried in priority order (weighted among equal
// priorities, or cheapest first for a cascade); a timeout, connection
// error, 429 or 5xx moves to the next, but only while nothing has been
// sent to the agent. A 4xx is the agent's request at fault and is
// returned as is, never retried.
func (g *Gateway) Chat(ctx context.Context, caller gateway.Caller, body []byte, w Sink) error {
	if len(body) > maxBody {
		return invalid("The request is larger than 4 MiB.")
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return invalid("The body is not a JSON chat completion request.")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return invalid("The body is not a JSON object.")
	}
	if req.Model == "" {
		return invalid("Name the model: \"model\": ALIAS.")
	}
	if len(req.Messages) == 0 || req.Messages[0] != '[' {
		return invalid("Send the conversation as \"messages\": [...].")
	}
	if len(bytes.TrimSpace(req.Messages[1:])) > 0 && bytes.TrimSpace(req.Messages[1:])[0] == ']' {
		return invalid("\"messages\" is empty: send at least one message.")
	}
	if !caller.Key.Allows("model", req.Model) {
		return problem.Forbidden("model_not_allowed", "This key may not use model "+req.Model+": it needs the scope model:"+req.Model+".")
	}
	asked := int64(0)
	if req.MaxCompletionTokens != nil {
		asked = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		asked = *req.MaxTokens
	}
	if asked < 0 {
		return invalid("max_tokens cannot be negative.")
	}
	deps, err := For(ctx, g.db.Read(), g.sealer, req.Model)
	var opts AliasSettings
	var settings TenantSettings
	var limits KeyLimits
	if err == nil {
		opts, settings, limits, err = callOptions(ctx, g.db.Read(), req.Model, caller.Tenant.ID, caller.Key.ID)
	}
	if err != nil {
		return problem.Unavailable("unavailable", "The model deployments cannot be read right now.", time.Second).Wrap(err)
	}
	if len(deps) == 0 {
		return problem.NotFound("model_not_found", "There is no model "+req.Model+" (or every deployment of it is switched off).")
	}
	promptEst := EstimateTokens(req.Messages)
	cascade := opts.Cascade && !req.Stream && len(deps) > 1
	if cascade {
		deps = cheapestFirst(deps, promptEst, asked)
	} else {
		deps = weighted(deps)
	}
	var reserve, maxOut int64
	for _, d := range deps {
		c := cost(d, promptEst, outputLimit(d, asked))
		if cascade {
			reserve += c // every attempt of a cascade is paid for
		} else {
			reserve = max(reserve, c)
		}
		maxOut = max(maxOut, outputLimit(d, asked))
	}

	start := g.now()
	tk, err := g.limits.admit(caller.Key.ID, limits, promptEst+maxOut, start)
	if err != nil {
		return err
	}
	keep := settings.Content != ContentNone
	call := Call{ID: store.NewID(), TenantID: caller.Tenant.ID, KeyID: caller.Key.ID, Alias: req.Model, Stream: req.Stream,
		ReservedMicros: reserve, CreatedAt: start.UTC(), JourneyID: JourneyOf(ctx)}
	if keep {
		call.Prompt = g.redactJSON(req.Messages)
	}

	// An answer kept for this tenant and request is served without an
	// upstream call and charged nothing.
	var ckey [32]byte
	cacheable := false
	if opts.CacheTTL > 0 {
		ckey, cacheable = cacheKey(caller.Tenant.ID, body)
	}
	if cacheable {
		if e, ok := g.cache.get(ckey, start); ok {
			g.limits.settle(tk, 0)
			call.Status, call.HTTPStatus, call.CacheHit, call.Deployment, call.ReservedMicros = StatusOK, http.StatusOK, true, e.deployment, 0
			if keep {
				call.Completion = g.redactJSON(messageOf(e.body))
			}
			call.Latency = g.now().Sub(start)
			call.TTFT = call.Latency
			if err := settle(context.WithoutCancel(ctx), g.db, call); err != nil {
				g.log.ErrorContext(ctx, "could not record a model call", "call", call.ID, "err", err)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Warden-Cache", "hit")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(e.body)
			return nil
		}
	}

	// A tenant that must not send personal data to a model provider has
	// its prompt redacted before it leaves.
	if settings.OutboundRedaction {
		if g.redactor == nil {
			g.limits.settle(tk, 0)
			return problem.Unavailable("redaction_unavailable", "This tenant's prompts are redacted before they leave Warden, and no redactor is configured.", 0)
		}
		red, err := g.redactor.JSON(req.Messages)
		if err != nil {
			g.limits.settle(tk, 0)
			return invalid("The messages could not be read for redaction.")
		}
		fields["messages"] = red
	}

	if err := g.db.Transact(ctx, func(tx *sql.Tx) error { return gateway.Reserve(ctx, tx, caller.Tenant.ID, reserve, start) }); err != nil {
		g.limits.settle(tk, 0)
		var p *problem.Error
		if errors.As(err, &p) && p.Kind == problem.KindExhausted {
			p = &problem.Error{Kind: p.Kind, Code: p.Code, Message: "The tenant's budget cannot cover this call's worst case (" +
				fmt.Sprint(reserve) + " micro-units).", Err: err}
			return p
		}
		return err
	}
	// From here the reservation is settled on every path, even when the
	// agent has gone away.
	settled := false
	finish := func(status string, httpStatus int) {
		if settled {
			return
		}
		settled = true
		call.Status, call.HTTPStatus, call.Latency = status, httpStatus, g.now().Sub(start)
		call.CostMicros = min(call.CostMicros, call.ReservedMicros)
		if !keep {
			call.Prompt, call.Completion = "", ""
		}
		g.limits.settle(tk, call.InputTokens+call.OutputTokens)
		if err := settle(context.WithoutCancel(ctx), g.db, call); err != nil {
			g.log.ErrorContext(ctx, "could not settle a model call", "call", call.ID, "err", err)
		}
	}

	var last error = problem.Unavailable("upstream_unavailable", "No deployment of "+req.Model+" answered.", time.Second)
	for i, d := range deps {
		t0 := g.now()
		res, cancel, first, err := g.try(ctx, d, fields, asked, req.Stream)
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
			if errors.Is(err, errBusy) {
				last = &problem.Error{Kind: problem.KindRateLimited, Code: "rate_limited", Message: "Every deployment of " + req.Model + " is at its concurrency limit.", RetryAfter: time.Second}
			}
			continue
		}
		if res.StatusCode != http.StatusOK {
			// A 4xx: the request itself is at fault; the agent sees the
			// upstream's own answer, and nothing is charged.
			call.Attempts = append(call.Attempts, att)
			call.Deployment = d.Name
			raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			res.Body.Close()
			cancel()
			finish(StatusRejected, res.StatusCode)
			return upstreamRefusal(res.StatusCode, raw)
		}
		if req.Stream {
			call.Attempts = append(call.Attempts, att)
			call.Deployment = d.Name
			defer cancel()
			// The call is settled and recorded before the agent sees
			// [DONE]: an agent that has its answer finds it in the budget
			// and the trace.
			g.stream(ctx, d, res, cancel, first, promptEst, &call, keep, w, start, func(s string) { finish(s, http.StatusOK) })
			return nil
		}
		res.Body.Close()
		cancel()
		a := g.answer(first, req.Model, promptEst)
		att.InputTokens, att.OutputTokens, att.CostMicros = a.in, a.out, cost(d, a.in, a.out)
		call.InputTokens += a.in
		call.OutputTokens += a.out
		call.CostMicros += att.CostMicros
		if cascade && i < len(deps)-1 {
			if why := checkAnswer(a.raw, req.ResponseFormat); why != "" {
				// Escalate: this answer is paid for, and the next
				// deployment is asked.
				att.Error = "check failed: " + why
				call.Attempts = append(call.Attempts, att)
				continue
			}
		}
		call.Attempts = append(call.Attempts, att)
		call.Deployment = d.Name
		if keep {
			call.Completion = g.redactJSON(a.message)
		}
		call.TTFT = g.now().Sub(start)
		finish(StatusOK, http.StatusOK)
		if cacheable {
			g.cache.put(ckey, a.raw, d.Name, time.Duration(opts.CacheTTL)*time.Second, g.now())
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(a.raw)
		return nil
	}
	finish(StatusFailed, problem.From(last).Status())
	return last
}

var errBusy = errors.New("at its concurrency limit")

// transient reports an upstream status worth trying the next deployment
// for.
func transient(status int) bool { return status == http.StatusTooManyRequests || status >= 500 }

// try calls one deployment. It returns the response once its first byte
// (a whole body when not streaming, the first event when streaming) is in
// hand, so a failure up to then can still fall over; a transient status is
// an error, a 4xx a response.
func (g *Gateway) try(ctx context.Context, d Deployment, fields map[string]json.RawMessage, asked int64, stream bool) (*http.Response, context.CancelFunc, []byte, error) {
	release, ok := g.acquire(d)
	if !ok {
		return nil, nil, nil, errBusy
	}
	out := make(map[string]json.RawMessage, len(fields)+1)
	for k, v := range fields {
		out[k] = v
	}
	out["model"], _ = json.Marshal(d.UpstreamModel)
	limit := int64(d.MaxOutputTokens)
	if asked > 0 {
		limit = min(asked, limit)
	}
	// The output cap is always sent, so the upstream cannot bill more than
	// was reserved.
	delete(out, "max_tokens")
	out["max_completion_tokens"], _ = json.Marshal(limit)
	if stream {
		out["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	body, _ := json.Marshal(out)

	cctx, cancel := context.WithCancel(ctx)
	var timedOut atomic.Bool
	timer := time.AfterFunc(d.Timeout, func() { timedOut.Store(true); cancel() }) // until the first byte
	var once sync.Once
	done := func() { once.Do(func() { timer.Stop(); cancel(); release() }) }
	fail := func(err error) (*http.Response, context.CancelFunc, []byte, error) {
		done()
		if timedOut.Load() && ctx.Err() == nil {
			return nil, nil, nil, fmt.Errorf("timeout after %s", d.Timeout)
		}
		return nil, nil, nil, err
	}
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, strings.TrimRight(d.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if d.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+d.APIKey)
	}
	res, err := g.client.Do(hreq)
	if err != nil {
		return fail(errors.New("connection: " + errorClass(err)))
	}
	if transient(res.StatusCode) {
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		return fail(fmt.Errorf("upstream %d", res.StatusCode))
	}
	if res.StatusCode != http.StatusOK {
		timer.Stop()
		return res, done, nil, nil
	}
	var first []byte
	if stream {
		br := bufio.NewReaderSize(res.Body, 16<<10)
		first, err = readEvent(br)
		res.Body = bufferedBody{br, res.Body}
	} else {
		first, err = io.ReadAll(io.LimitReader(res.Body, 32<<20))
	}
	if err != nil && !(stream && errors.Is(err, io.EOF) && len(first) > 0) {
		res.Body.Close()
		return fail(errors.New("connection: " + errorClass(err)))
	}
	timer.Stop()
	return res, done, first, nil
}

// bufferedBody is a response body read through the buffer its first event
// was read with.
type bufferedBody struct {
	*bufio.Reader
	io.Closer
}

// errorClass names a transport error without its addresses or payload.
func errorClass(err error) string {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "closed early"
	default:
		return "failed"
	}
}

// acquire takes one of d's concurrency slots without waiting. With N
// replicas alive each holds ceil(Concurrency/N) slots, so together they
// hold at most Concurrency + N - 1 (docs/deploy.md).
func (g *Gateway) acquire(d Deployment) (func(), bool) {
	n := g.limits.replicaCount()
	g.mu.Lock()
	slots := max(1, (d.Concurrency+n-1)/n)
	ch := g.slots[d.ID]
	if ch == nil || cap(ch) != slots {
		// Calls holding the old slots release them there; a change of N
		// lets at most the old share run on beside the new one, once.
		ch = make(chan struct{}, slots)
		g.slots[d.ID] = ch
	}
	g.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, true
	default:
		return nil, false
	}
}

// readEvent reads one SSE event (up to its blank line).
func readEvent(br *bufio.Reader) ([]byte, error) {
	var ev []byte
	for {
		line, err := br.ReadBytes('\n')
		ev = append(ev, line...)
		if err != nil {
			return ev, err
		}
		if len(bytes.TrimSpace(line)) == 0 && len(bytes.TrimSpace(ev)) > 0 {
			return ev, nil
		}
	}
}

// parsedAnswer is a non-streamed answer as the agent receives it (with
// the alias as its model) and what it used.
type parsedAnswer struct {
	raw     []byte
	message json.RawMessage // the first choice's message
	in, out int64
}

// answer reads a non-streamed answer. Without a reported usage, the
// estimate is charged (capped later by the reservation).
func (g *Gateway) answer(raw []byte, alias string, promptEst int64) parsedAnswer {
	var resp map[string]json.RawMessage
	if json.Unmarshal(raw, &resp) == nil {
		resp["model"], _ = json.Marshal(alias)
		raw, _ = json.Marshal(resp)
	}
	var u struct {
		Usage *usage `json:"usage"`
	}
	_ = json.Unmarshal(raw, &u)
	a := parsedAnswer{raw: raw, message: messageOf(raw)}
	if u.Usage != nil {
		a.in, a.out = u.Usage.PromptTokens, u.Usage.CompletionTokens
	} else {
		a.in, a.out = promptEst, EstimateTokens(raw)
	}
	return a
}

// messageOf is the first choice's message of a chat completion.
func messageOf(raw []byte) json.RawMessage {
	var u struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &u) != nil || len(u.Choices) == 0 {
		return nil
	}
	return u.Choices[0].Message
}

// stream passes the upstream's events through as they come, reading the
// usage from the last one. A stream that ends without [DONE] (upstream
// cut, agent gone, or no event for the deployment's timeout: stalled) is
// charged for the text that arrived. Only the first maxStored bytes of
// the text are kept (for the trace); the rest is counted, never held.
func (g *Gateway) stream(ctx context.Context, d Deployment, res *http.Response, cancel context.CancelFunc, first []byte, promptEst int64, call *Call, keep bool, w Sink, start time.Time, settle func(status string)) {
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
	// A stream that stalls after its first byte is cut after the
	// deployment's timeout without an event.
	var stalled atomic.Bool
	idle := time.AfterFunc(d.Timeout, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	var text strings.Builder
	var textLen int64
	var u *usage
	done := false
	// account charges what the stream used: the usage it reported, or for
	// a stream cut before its usage, the text that arrived.
	account := func(status string) {
		if u != nil {
			call.InputTokens, call.OutputTokens = u.PromptTokens, u.CompletionTokens
		} else {
			status = StatusCut
			call.InputTokens, call.OutputTokens = promptEst, textLen/3+1
		}
		if stalled.Load() && !done {
			call.Attempts[len(call.Attempts)-1].Error = fmt.Sprintf("stalled: no event for %s", d.Timeout)
		}
		att := &call.Attempts[len(call.Attempts)-1]
		att.InputTokens, att.OutputTokens, att.CostMicros = call.InputTokens, call.OutputTokens, cost(d, call.InputTokens, call.OutputTokens)
		call.CostMicros += att.CostMicros
		if keep {
			call.Completion = g.redactText(text.String())
		}
		settle(status)
	}
	collect := func(p []byte) {
		textLen += int64(len(p))
		if keep && text.Len() <= maxStored {
			text.Write(p[:min(len(p), maxStored+1-text.Len())])
		}
	}
	ev := first
	for {
		if len(ev) > 0 {
			for _, line := range bytes.Split(ev, []byte("\n")) {
				data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
				if !ok {
					continue
				}
				data = bytes.TrimSpace(data)
				if string(data) == "[DONE]" {
					done = true
					continue
				}
				var chunk struct {
					Usage   *usage `json:"usage"`
					Choices []struct {
						Delta struct {
							Content   string          `json:"content"`
							ToolCalls json.RawMessage `json:"tool_calls"`
						} `json:"delta"`
					} `json:"choices"`
				}
				if json.Unmarshal(data, &chunk) != nil {
					continue
				}
				if chunk.Usage != nil {
					u = chunk.Usage
				}
				for _, c := range chunk.Choices {
					collect([]byte(c.Delta.Content))
					if len(c.Delta.ToolCalls) > 0 {
						collect(c.Delta.ToolCalls)
					}
				}
			}
			if done {
				idle.Stop()
				account(StatusOK)
			}
			// Each chunk names the alias the agent asked for, as a whole
			// answer does, not the upstream's model id. A JSON string
			// cannot hold an unescaped quote, so the member is found as
			// written and never inside content.
			ev = renameModel(ev, d.UpstreamModel, call.Alias)
			if _, err := w.Write(ev); err != nil {
				break
			}
			w.Flush()
		}
		if done || ctx.Err() != nil {
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
}

// maxStored bounds a stored prompt or completion.
const maxStored = 8 << 10

func (g *Gateway) redactJSON(raw []byte) string {
	if g.redactor == nil || len(raw) == 0 {
		return ""
	}
	out, err := g.redactor.JSON(raw)
	if err != nil {
		return ""
	}
	return truncate(string(out))
}

func (g *Gateway) redactText(s string) string {
	if g.redactor == nil || s == "" {
		return ""
	}
	return truncate(g.redactor.String(s))
}

func truncate(s string) string {
	if len(s) <= maxStored {
		return s
	}
	return s[:maxStored] + "…"
}

// upstreamRefusal is a 4xx from the upstream as the agent's error, with
// the upstream's message when it sent one in OpenAI's shape.
func upstreamRefusal(status int, raw []byte) error {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	msg := fmt.Sprintf("The model refused the request (%d).", status)
	code := "upstream_rejected"
	if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
		msg = body.Error.Message
		if c, ok := body.Error.Code.(string); ok && c != "" {
			code = c
		}
	}
	return &problem.Error{Kind: problem.KindOf(status), Code: code, Message: msg}
}

// renameModel replaces the upstream's model id in a stream event's chunks
// ("model":"gpt-4o-mini", with or without a space after the colon) with
// the alias.
func renameModel(ev []byte, upstream, alias string) []byte {
	if upstream == alias || !bytes.Contains(ev, []byte(`"model"`)) {
		return ev
	}
	up, _ := json.Marshal(upstream)
	al, _ := json.Marshal(alias)
	for _, sep := range []string{":", ": "} {
		from := append([]byte(`"model"`+sep), up...)
		if bytes.Contains(ev, from) {
			ev = bytes.ReplaceAll(ev, from, append([]byte(`"model"`+sep), al...))
		}
	}
	return ev
}
