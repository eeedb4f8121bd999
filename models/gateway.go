package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/egress"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
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
	log      *slog.Logger
	now      func() time.Time

	mu    sync.Mutex
	slots map[string]chan struct{} // deployment id → its concurrency slots

	limits *limiter     // keys' model limits, in this process
	cache  *answerCache // answers of aliases with a cache, in this process

	egressMu sync.Mutex
	egress   *upstreamClient // the client for the allowed hosts last read

	obs atomic.Pointer[observerBox] // SetObserver; nil: none
}

// upstreamClient is the HTTP client for one list of allowed hosts. A
// connection it dialled was checked against that list, so when the list
// changes a new client (with its own connections) replaces it: a host
// taken off the list is never reached again through a kept connection.
type upstreamClient struct {
	hosts  string // as stored (AllowedHosts)
	client *http.Client
}

// NewGateway returns a gateway over db. Without a redactor no prompt or
// completion is stored.
func NewGateway(db *store.DB, sealer *seal.Sealer, redactor *redact.Redactor, log *slog.Logger) *Gateway {
	if log == nil {
		log = slog.Default()
	}
	return &Gateway{db: db, sealer: sealer, redactor: redactor, log: log, now: time.Now, slots: map[string]chan struct{}{},
		limits: newLimiter(), cache: newAnswerCache()}
}

// clientFor returns the upstream client for the allowed hosts (one per
// line, as stored): the egress policy of package egress, the same as
// callbacks', so a deployment cannot reach loopback, private, link-local
// or other internal addresses unless its host is listed; no redirect is
// followed, and no proxy is used.
func (g *Gateway) clientFor(hosts string) *http.Client {
	g.egressMu.Lock()
	defer g.egressMu.Unlock()
	if g.egress != nil && g.egress.hosts == hosts {
		return g.egress.client
	}
	listed := map[string]bool{}
	for _, h := range strings.Fields(hosts) {
		listed[h] = true
	}
	t := egress.Policy{AllowHost: func(h string) bool { return listed[h] }}.Transport()
	t.MaxIdleConnsPerHost = 256
	if old := g.egress; old != nil {
		// Idle connections of the old list close now; those in use close
		// when idle, never reused by the new client.
		defer old.client.CloseIdleConnections()
	}
	g.egress = &upstreamClient{hosts: hosts, client: &http.Client{Transport: tracedTransport{t}, CheckRedirect: egress.NoRedirects}}
	return g.egress.client
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
func (g *Gateway) Models(ctx context.Context, caller admission.Caller) ([]string, error) {
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

// request is the part of an OpenAI chat request the gateway reads
// (parseChat checks the rest).
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

// cost is tokens at a deployment's prices, each rounded up to a
// micro-unit.
func cost(d Deployment, in, out int64) int64 {
	return min(maxCost, tokensCost(in, d.InputMicrosPerM)+tokensCost(out, d.OutputMicrosPerM))
}

// Chat serves one chat completion for caller. Before the first byte is
// written it returns a *problem.Error for the handler to render; after it,
// the answer (or the stream, cut or whole) has been written and it
// returns nil.
//
// Admission: the request's members are checked (parseChat: what Warden
// cannot bound is refused), then the key's model limits (requests and
// tokens a minute, the tokens bounded here and corrected when the call is
// settled).
//
// Money: the worst case — the prompt bound of the body as forwarded (a
// token a byte, at most the context window) plus n times the output cap,
// at the dearest deployment the call may reach; at every deployment
// together when a cascade may try them all — is reserved in one
// transaction before any upstream call, and settled to the usage the
// upstream reports in the transaction that records the call; a cut stream
// is charged for what arrived. Concurrent calls can never overspend what
// the upstreams can bill. An upstream that reports more than that is
// charged as reported, and the excess is recorded on the call
// (OverrunMicros) for the model_overrun alert.
//
// Routing: deployments are tried in priority order (weighted among equal
// priorities, or cheapest first for a cascade); a timeout, connection
// error, refused address, redirect, 429, 5xx or an answer that is not the
// protocol's moves to the next, but only while nothing has been sent to
// the agent. A 4xx is the agent's request at fault and is returned as is,
// never retried.
func (g *Gateway) Chat(ctx context.Context, caller admission.Caller, body []byte, w Sink) (err error) {
	ctx, span := startChat(ctx) // tracing.go
	defer func() { span.end(err) }()
	if len(body) > maxBody {
		return invalid("The request is larger than 4 MiB.")
	}
	cr, err := parseChat(body)
	if err != nil {
		return err
	}
	req, fields := cr.request, cr.fields
	ctx = g.withRecorder(ctx, caller.Tenant.ID, fields["tools"], fields["functions"])
	span.request(req)
	tags, err := callTags(ctx, fields["metadata"])
	if err != nil {
		return err
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
	// The deployments and the call's options in one read.
	deps, opts, settings, limits, allowedHosts, err := forCall(ctx, g.db.Read(), g.sealer, req.Model, caller.Tenant.ID, caller.Key.ID)
	if err != nil {
		const msg = "The model deployments cannot be read right now."
		if g.db.NotAnswering(err) {
			return g.db.StorageNotAnswering(msg, err)
		}
		return problem.Unavailable("unavailable", msg, time.Second).Wrap(err)
	}
	if len(deps) == 0 {
		return modelNotFound(req.Model)
	}
	if err := modelAllowed(caller, req.Model); err != nil { // after existence (access.go)
		return err
	}
	// worst is the reservation for a forwarded body of bodyBytes and the
	// tokens it may use at most (for the key's tokens a minute).
	worst := func(bodyBytes int) (reserve, tokens int64) {
		for _, d := range deps {
			in, out := bound(d, bodyBytes, asked, cr.n)
			if c := cost(d, in, out); opts.Cascade && !req.Stream && len(deps) > 1 {
				reserve = min(maxCost, reserve+c) // every attempt of a cascade is paid for
			} else {
				reserve = max(reserve, c)
			}
			tokens = max(tokens, in+out)
		}
		return reserve, tokens
	}
	bodyBytes := forwardedSize(fields)
	cascade := opts.Cascade && !req.Stream && len(deps) > 1
	if cascade {
		deps = cheapestFirst(deps, func(d Deployment) int64 { in, out := bound(d, bodyBytes, asked, cr.n); return cost(d, in, out) })
	} else {
		deps = weighted(deps)
	}
	_, tokens := worst(bodyBytes)

	start := g.now()
	tk, err := g.limits.admit(caller.Key.ID, limits, tokens, start)
	g.rateLimitHeaders(w.Header(), caller.Key.ID, limits, start)
	if err != nil {
		return err
	}
	keep := settings.Content != ContentNone
	call := Call{ID: store.NewID(), TenantID: caller.Tenant.ID, KeyID: caller.Key.ID, Alias: req.Model, Stream: req.Stream,
		CreatedAt: start.UTC(), JourneyID: JourneyOf(ctx), Operation: operationOf(ctx), Metadata: g.storedMetadata(tags)}
	w.Header().Set(HeaderRequestID, call.ID)
	span.call = &call
	if keep {
		call.Prompt = g.recorderOf(ctx).storedJSON(ctx, req.Messages)
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
			call.Status, call.HTTPStatus, call.CacheHit, call.Deployment = StatusOK, http.StatusOK, true, e.deployment
			if keep {
				call.Completion = g.recorderOf(ctx).storedJSON(ctx, messageOf(e.body))
			}
			call.Latency = g.now().Sub(start)
			call.TTFT = call.Latency
			if err := g.settle(context.WithoutCancel(ctx), call); err != nil {
				g.log.ErrorContext(ctx, "could not record a model call", "call", call.ID, "err", err)
			}
			setCost(w.Header(), &call)
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
		// Tokens may be longer than what they replace: the bound is of
		// the body that leaves.
		bodyBytes = forwardedSize(fields)
	}
	reserve, _ := worst(bodyBytes)
	call.ReservedMicros = reserve

	if err := g.reserve(ctx, &call, tk, start); err != nil {
		return err
	}
	finish := g.finisher(ctx, &call, tk, keep, w, start) // reserve.go

	client := g.clientFor(allowedHosts)
	var last error = problem.Unavailable("upstream_unavailable", "No deployment of "+req.Model+" answered.", time.Second)
	for i, d := range deps {
		inBound, outBound := bound(d, bodyBytes, asked, cr.n)
		t0 := g.now()
		res, cancel, first, err := g.try(ctx, client, d, fields, asked, cr.n, req.Stream)
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
				last = &problem.Error{Kind: problem.KindRateLimited, Code: "rate_limited", Message: "Every deployment of " + req.Model + " is at its concurrency limit.", RetryAfter: time.Second}
			case errors.As(err, &bad):
				last = problem.New(problem.KindBadGateway, "upstream_invalid", "The model's answer was not an OpenAI chat completion; nothing of it was passed on.")
			default:
				last = problem.Unavailable("upstream_unavailable", "No deployment of "+req.Model+" answered.", time.Second)
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
			g.stream(ctx, d, res, cancel, first, streamBounds{in: inBound, out: outBound, inEst: estimateText(int64(bodyBytes)) + 16},
				&call, keep, w, start, func(s string) { finish(s, http.StatusOK) })
			return nil
		}
		res.Body.Close()
		cancel()
		a := g.answer(first, req.Model)
		att.InputTokens, att.OutputTokens, att.Usage = charged(a.usage, inBound, outBound, estimateText(int64(bodyBytes))+16, a.textBytes)
		att.CostMicros = cost(d, att.InputTokens, att.OutputTokens)
		call.InputTokens += att.InputTokens
		call.OutputTokens += att.OutputTokens
		call.CostMicros = min(maxCost, call.CostMicros+att.CostMicros)
		call.Usage = worseUsage(call.Usage, att.Usage)
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
			call.Completion = g.recorderOf(ctx).storedJSON(ctx, a.message)
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

// forwardedSize is the size of the body the members make, as sent: the
// model id and output cap Warden adds are covered by the bound's margin.
func forwardedSize(fields map[string]json.RawMessage) int {
	n := 2
	for k, v := range fields {
		n += len(k) + 4 + len(v)
	}
	return n
}

// Where a call's tokens came from (Call.Usage, Attempt.Usage).
const (
	UsageReported  = "reported"  // the upstream's own count
	UsageEstimated = "estimated" // no usage came (a cut stream, an upstream that reports none): Warden's high estimate, at most the bound
	UsageInvalid   = "invalid"   // the upstream reported a negative or impossible count: the bound is charged
)

// charged is what one answer is charged for: the usage the upstream
// reported when it is believable (even above the bound: the upstream
// billed it); without usage, an estimate from the prompt and the text
// that arrived, at most the bound; for an unbelievable usage, the bound.
func charged(u *usage, inBound, outBound, inEst, textBytes int64) (in, out int64, source string) {
	switch {
	case u == nil:
		return min(inEst, inBound), min(estimateText(textBytes), outBound), UsageEstimated
	case !u.valid():
		return inBound, outBound, UsageInvalid
	}
	return u.PromptTokens, u.CompletionTokens, UsageReported
}

// worseUsage is the less trustworthy of two usage sources, for a call of
// several attempts.
func worseUsage(a, b string) string {
	rank := map[string]int{"": 0, UsageReported: 1, UsageEstimated: 2, UsageInvalid: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

var errBusy = errors.New("at its concurrency limit")

// transient reports an upstream status worth trying the next deployment
// for.
func transient(status int) bool { return status == http.StatusTooManyRequests || status >= 500 }

// try calls one deployment. It returns the response once its first byte
// (a whole body when not streaming, the first event when streaming) is in
// hand, so a failure up to then can still fall over; a transient status,
// a redirect or an answer that is not the protocol's is an error, a 4xx a
// response.
func (g *Gateway) try(ctx context.Context, client *http.Client, d Deployment, fields map[string]json.RawMessage, asked, n int64, stream bool) (*http.Response, context.CancelFunc, []byte, error) {
	release, ok := g.acquire(d)
	if !ok {
		return nil, nil, nil, errBusy
	}
	out := make(map[string]json.RawMessage, len(fields)+4)
	for k, v := range fields {
		out[k] = v
	}
	out["model"], _ = json.Marshal(d.UpstreamModel)
	// The output cap is always sent, so the upstream cannot bill more than
	// was reserved.
	out["max_completion_tokens"], _ = json.Marshal(outputLimit(d, asked))
	if n > 1 {
		out["n"], _ = json.Marshal(n)
	}
	if stream {
		out["stream"] = json.RawMessage(`true`)
		out["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	body, _ := json.Marshal(out)
	return g.post(ctx, client, d, release, "/chat/completions", body, stream, func(first []byte) string {
		switch {
		case stream && !chunkEvent(first):
			return "not a stream of chat completion chunks"
		case !stream && !isCompletion(first):
			return "not a chat completion"
		}
		return ""
	})
}

// post sends body to d's path holding one of its slots (release gives it
// back), with try's rules: the deployment's timeout runs until the first
// byte; a transient status, a redirect, a connection error or an answer
// that protocol says is not its own (why: the reason, "" when it is) is an
// error; a 4xx is a response.
func (g *Gateway) post(ctx context.Context, client *http.Client, d Deployment, release func(), path string, body []byte, stream bool, protocol func(first []byte) (why string)) (*http.Response, context.CancelFunc, []byte, error) {
	cctx, cancel := context.WithCancel(withAttempt(ctx, d))
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
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, strings.TrimRight(d.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if d.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+d.APIKey)
	}
	res, err := client.Do(hreq)
	if err != nil {
		return fail(errors.New("connection: " + errorClass(err)))
	}
	switch {
	case transient(res.StatusCode):
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		return fail(fmt.Errorf("upstream %d", res.StatusCode))
	case res.StatusCode >= 300 && res.StatusCode < 400:
		// Never followed: the request and its key would go where the
		// deployment never named, and the answer is not the protocol's.
		res.Body.Close()
		return fail(invalidAnswer{fmt.Sprintf("upstream %d: redirects are not followed", res.StatusCode)})
	case res.StatusCode != http.StatusOK:
		timer.Stop()
		return res, done, nil, nil
	}
	var first []byte
	if stream {
		br := bufio.NewReaderSize(res.Body, 16<<10)
		first, err = firstEvent(br)
		res.Body = bufferedBody{br, res.Body}
	} else {
		first, err = io.ReadAll(io.LimitReader(res.Body, 32<<20))
	}
	if err != nil && !(stream && errors.Is(err, io.EOF) && len(first) > 0) {
		res.Body.Close()
		return fail(errors.New("connection: " + errorClass(err)))
	}
	// Only the protocol's answer is passed on: a body that is not its
	// answer (or a stream that is not its events) is some other server's,
	// and may be anything.
	if why := protocol(first); why != "" {
		res.Body.Close()
		return fail(invalidAnswer{why})
	}
	timer.Stop()
	return res, done, first, nil
}

// invalidAnswer is an upstream answer that is not OpenAI's chat protocol
// (a redirect, a body that is not a completion): never passed on.
type invalidAnswer struct{ why string }

func (e invalidAnswer) Error() string { return "invalid answer: " + e.why }

// isCompletion reports whether raw is a chat completion: a JSON object
// with a list of choices.
func isCompletion(raw []byte) bool {
	var c struct {
		Choices []json.RawMessage `json:"choices"`
	}
	return json.Valid(raw) && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &c) == nil && c.Choices != nil
}

// maxLeadingEvents bounds the events without data (comments, such as a
// provider's keep-alives) read before a stream's first chunk.
const maxLeadingEvents = 32

// firstEvent reads a stream up to and with its first event that carries
// data; comment-only events before it are kept, to be passed on with it.
func firstEvent(br *bufio.Reader) ([]byte, error) {
	var all []byte
	for i := 0; i < maxLeadingEvents && len(all) < 64<<10; i++ {
		ev, err := readEvent(br)
		all = append(all, ev...)
		if err != nil || hasData(ev) {
			return all, err
		}
	}
	return all, nil
}

func hasData(ev []byte) bool {
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("data:")) {
			return true
		}
	}
	return false
}

// chunkEvent reports whether ev (a stream's first events) is
// server-sent events whose first data is a chat completion chunk (a JSON
// object with choices) or the end of the stream.
func chunkEvent(ev []byte) bool {
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0, line[0] == ':', bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")), bytes.HasPrefix(line, []byte("retry:")):
			continue
		case bytes.HasPrefix(line, []byte("data:")):
			data := bytes.TrimSpace(line[len("data:"):])
			if string(data) == "[DONE]" {
				return true
			}
			var c struct {
				Choices []json.RawMessage `json:"choices"`
			}
			return bytes.HasPrefix(data, []byte("{")) && json.Unmarshal(data, &c) == nil && c.Choices != nil
		default:
			return false // not an SSE field
		}
	}
	return false
}

// streamBounds are a stream's bounds at its deployment (bound) and the
// estimate of its prompt, for a stream that ends without its usage.
type streamBounds struct{ in, out, inEst int64 }

// bufferedBody is a response body read through the buffer its first event
// was read with.
type bufferedBody struct {
	*bufio.Reader
	io.Closer
}

// errorClass names a transport error without its addresses or payload.
func errorClass(err error) string {
	switch {
	case errors.Is(err, egress.ErrInternal):
		return "refused: the deployment's address is internal and its host is not in the allowed hosts"
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
// the alias as its model), and what the upstream said it used.
type parsedAnswer struct {
	raw       []byte
	message   json.RawMessage // the first choice's message
	usage     *usage          // nil: none reported
	textBytes int64           // the bytes of every choice's message, for an estimate
}

// answer reads a non-streamed answer (a chat completion: try checked).
func (g *Gateway) answer(raw []byte, alias string) parsedAnswer {
	var resp map[string]json.RawMessage
	if json.Unmarshal(raw, &resp) == nil {
		resp["model"], _ = json.Marshal(alias)
		raw, _ = json.Marshal(resp)
	}
	var u struct {
		Usage   *usage `json:"usage"`
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	_ = json.Unmarshal(raw, &u)
	a := parsedAnswer{raw: raw, message: messageOf(raw), usage: u.Usage}
	for _, c := range u.Choices {
		a.textBytes += int64(len(c.Message))
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
func (g *Gateway) stream(ctx context.Context, d Deployment, res *http.Response, cancel context.CancelFunc, first []byte, b streamBounds, call *Call, keep bool, w Sink, start time.Time, settle func(status string)) {
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
	var streamed streamedCalls // the tool calls, put together
	var u *usage
	done := false
	gone := false // the agent could not be written to
	// account charges what the stream used: the usage it reported, or for
	// a stream cut before its usage, the text that arrived.
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
		call.InputTokens, call.OutputTokens, call.Usage = att.InputTokens, att.OutputTokens, att.Usage
		call.CostMicros = min(maxCost, call.CostMicros+att.CostMicros)
		if keep {
			call.Completion = streamed.record(ctx, g.recorderOf(ctx), text.String())
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
						textLen += int64(len(c.Delta.ToolCalls))
						if keep {
							streamed.add(c.Delta.ToolCalls)
						}
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
				gone = true
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
	// A stream the upstream broke must not look finished: without [DONE]
	// a client would take the text so far for the whole answer. The
	// protocol's error event makes every OpenAI SDK raise.
	if !done && !gone && ctx.Err() == nil {
		code, msg := "upstream_cut", "The model's stream ended before it finished, so the answer is incomplete; what arrived was charged."
		if stalled.Load() {
			code, msg = "upstream_stalled", fmt.Sprintf("The model's stream stalled (no event for %s) and was cut, so the answer is incomplete; what arrived was charged.", d.Timeout)
		}
		_, _ = w.Write(StreamError(code, msg))
		w.Flush()
	}
}

// StreamError is the server-sent event that ends a chat stream Warden
// could not finish, as OpenAI ends one: an event named error whose data
// is OpenAI's error object (type server_error), and no [DONE] after it.
func StreamError(code, message string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "server_error", "code": code, "param": nil}})
	return append(append([]byte("event: error\ndata: "), b...), "\n\n"...)
}

// maxStored bounds a stored prompt or completion.
const maxStored = 8 << 10

func truncate(s string) string {
	if len(s) <= maxStored {
		return s
	}
	return s[:maxStored] + "…"
}

// clipJSON returns raw (a JSON document) when it is at most limit bytes,
// else a valid JSON document of about limit bytes made from its start:
// the string being read when the limit is reached is cut (marked with
// "…"), and every array and object still open is closed without the
// rest. A document that is not valid JSON is returned cut at the limit.
func clipJSON(raw []byte, limit int) []byte {
	if len(raw) <= limit {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		obj     bool
		n       int  // members or elements written
		wantKey bool // in an object: the next token is a key
	}
	var stack []frame
	var out bytes.Buffer
	out.Grow(limit + 64)
	closeAll := func() []byte {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].obj {
				out.WriteByte('}')
			} else {
				out.WriteByte(']')
			}
		}
		return out.Bytes()
	}
	// room is what a string may still take: the limit less what is
	// written, its quotes and the closers still to come.
	room := func() int { return limit - out.Len() - 2 - len(stack) }
	valueDone := func() {
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			top.n++
			top.wantKey = top.obj
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			if len(stack) == 0 && out.Len() > 0 {
				return out.Bytes()
			}
			return raw[:limit]
		}
		if d, ok := tok.(json.Delim); ok && (d == ']' || d == '}') {
			out.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		inValue := top != nil && top.obj && !top.wantKey // after a key: a value must follow
		if !inValue && room() <= 0 {
			return closeAll()
		}
		if top != nil && !inValue && top.n > 0 {
			out.WriteByte(',')
		}
		if top != nil && top.obj && top.wantKey {
			k, _ := tok.(string)
			b, _ := json.Marshal(k)
			out.Write(b)
			out.WriteByte(':')
			top.wantKey = false
			continue
		}
		switch t := tok.(type) {
		case json.Delim: // '[' or '{'
			out.WriteByte(byte(t))
			stack = append(stack, frame{obj: t == '{', wantKey: t == '{'})
			continue
		case string:
			if r := room(); len(t) > r {
				cut := max(0, r-len("…"))
				for cut > 0 && !utf8.RuneStart(t[cut]) {
					cut--
				}
				b, _ := json.Marshal(t[:cut] + "…")
				out.Write(b)
				valueDone()
				return closeAll()
			}
			b, _ := json.Marshal(t)
			out.Write(b)
		case json.Number:
			out.WriteString(t.String())
		case bool:
			out.WriteString(strconv.FormatBool(t))
		case nil:
			out.WriteString("null")
		}
		valueDone()
	}
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
