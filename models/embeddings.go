package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/tracing"
)

// embedForwarded are the members of an embeddings request Warden passes
// on: the input (counted in the bound) and what changes nothing the call
// is billed beyond it. The model id is replaced per deployment.
var embedForwarded = map[string]bool{"input": true, "encoding_format": true, "dimensions": true, "user": true}

// MaxEmbeddingInputs is the most inputs one embeddings call may carry:
// OpenAI's own maximum.
const MaxEmbeddingInputs = 2048

// maxEmbeddingAnswer bounds an upstream's embeddings answer read whole
// (2048 inputs of 3072 floats as JSON are about 120 MiB; base64 a fifth).
const maxEmbeddingAnswer = 256 << 20

// embedRequest is an embeddings request as checked.
type embedRequest struct {
	model  string
	input  json.RawMessage
	inputs int  // how many inputs
	tokens bool // the input is token arrays, not text
	fields map[string]json.RawMessage
}

// parseEmbeddings reads and checks an embeddings request body: OpenAI's
// members only, the input as a string, strings, a token array or token
// arrays, none empty.
func parseEmbeddings(body []byte) (embedRequest, error) {
	var e embedRequest
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil || all == nil {
		return e, invalid("The body is not a JSON embeddings request.")
	}
	if json.Unmarshal(all["model"], &e.model) != nil || e.model == "" {
		return e, invalid("Name the model: \"model\": ALIAS.")
	}
	e.fields = map[string]json.RawMessage{}
	var unknown []string
	for k, v := range all {
		switch {
		case k == "model":
		case embedForwarded[k]:
			e.fields[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return e, unsupported(fmt.Sprintf("Warden does not forward %s: an embeddings request has model, input, encoding_format, dimensions and user.",
			quoteList(unknown)))
	}
	e.input = all["input"]
	n, tokens, err := checkInput(e.input)
	if err != nil {
		return e, err
	}
	e.inputs, e.tokens = n, tokens
	if raw, ok := all["encoding_format"]; ok && !isNull(raw) {
		var f string
		if json.Unmarshal(raw, &f) != nil || (f != "float" && f != "base64") {
			return e, invalid("\"encoding_format\" is \"float\" or \"base64\".")
		}
	}
	if raw, ok := all["dimensions"]; ok && !isNull(raw) {
		var d int64
		if json.Unmarshal(raw, &d) != nil || d < 1 || d > 1<<16 {
			return e, invalid("\"dimensions\" is a whole number of at least 1.")
		}
	}
	if raw, ok := all["user"]; ok && !isNull(raw) {
		var u string
		if json.Unmarshal(raw, &u) != nil {
			return e, invalid("\"user\" is a string.")
		}
	}
	return e, nil
}

// checkInput returns how many inputs raw holds and whether they are token
// arrays.
func checkInput(raw json.RawMessage) (n int, tokens bool, err error) {
	const shape = "Send \"input\" as a string, a list of strings, a token array or a list of token arrays."
	if len(raw) == 0 || isNull(raw) {
		return 0, false, invalid("Send the text to embed as \"input\".")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return 0, false, invalid("\"input\" is empty: send the text to embed.")
		}
		return 1, false, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return 0, false, invalid(shape)
	}
	if len(items) == 0 {
		return 0, false, invalid("\"input\" is an empty list: send at least one input.")
	}
	var texts []string
	var ids []int64
	var lists [][]int64
	switch {
	case json.Unmarshal(raw, &texts) == nil:
		for i, t := range texts {
			if t == "" {
				return 0, false, invalid(fmt.Sprintf("Input %d is empty: every input has text.", i+1))
			}
		}
		n = len(texts)
	case json.Unmarshal(raw, &ids) == nil:
		n, tokens = 1, true
		lists = [][]int64{ids}
	case json.Unmarshal(raw, &lists) == nil:
		n, tokens = len(lists), true
	default:
		return 0, false, invalid(shape)
	}
	for i, l := range lists {
		if len(l) == 0 {
			return 0, false, invalid(fmt.Sprintf("Input %d is an empty token array.", i+1))
		}
		for _, t := range l {
			if t < 0 {
				return 0, false, invalid("A token is a whole number of at least 0.")
			}
		}
	}
	if n > MaxEmbeddingInputs {
		return 0, false, invalid(fmt.Sprintf("\"input\" has %d inputs; send at most %d in one request.", n, MaxEmbeddingInputs))
	}
	return n, tokens, nil
}

// embedBound is the most input tokens an embeddings call of a forwarded
// body of bodyBytes with inputs inputs may bill at d: a token a byte of
// the body (promptBound; a token id is at least one digit), and no input
// longer than the context window (a longer one is refused, not billed).
func embedBound(d Deployment, bodyBytes, inputs int) int64 {
	return min(promptBound(bodyBytes), int64(d.ContextWindow)*int64(max(inputs, 1)))
}

// embedCharged is what an embeddings answer is charged for: the prompt
// tokens the upstream reported when believable (even above the bound),
// else the bound.
func embedCharged(u *usage, inBound int64) (int64, string) {
	switch {
	case u == nil:
		return inBound, UsageEstimated
	case !u.valid():
		return inBound, UsageInvalid
	}
	return u.PromptTokens, UsageReported
}

// Embeddings serves one embeddings call (POST /v1/embeddings) for caller,
// as Chat serves a chat completion: the alias must exist (404
// model_not_found) and be in the key's scopes (403); the key's model
// limits admit it; the tenant's outbound redaction applies to the text
// inputs (token arrays cannot be read, and are refused for such a
// tenant); the worst case — the input bound at the dearest deployment's
// input price, no output — is reserved before any upstream call and
// settled to the usage the upstream reports, in the transaction that
// records the call (Operation OpEmbeddings, its inputs redacted, never
// its vectors). Deployments are tried in their order (weighted among
// equal priorities; there is no cascade: an embedding cannot be checked);
// a timeout, connection error, 429, 5xx or an answer that is not an
// embeddings list moves to the next; a 4xx is the agent's, returned as
// the upstream said it. It returns a *problem.Error before anything is
// written, and nil once the answer is.
func (g *Gateway) Embeddings(ctx context.Context, caller admission.Caller, body []byte, w Sink) (err error) {
	ctx, span := startCall(ctx, tracing.OperationEmbeddings) // tracing.go
	defer func() { span.end(err) }()
	if len(body) > maxBody {
		return invalid("The request is larger than 4 MiB.")
	}
	ctx = g.withRecorder(ctx, caller.Tenant.ID)
	er, err := parseEmbeddings(body)
	if err != nil {
		return err
	}
	span.model(er.model)
	// OpenAI's embeddings take no metadata: tags come in the header only.
	tags, err := callTags(ctx, nil)
	if err != nil {
		return err
	}
	deps, err := For(ctx, g.db.Read(), g.sealer, er.model)
	var settings TenantSettings
	var limits KeyLimits
	var allowedHosts string
	if err == nil {
		_, settings, limits, allowedHosts, err = callOptions(ctx, g.db.Read(), er.model, caller.Tenant.ID, caller.Key.ID)
	}
	if err != nil {
		return g.deploymentsUnreadable(err)
	}
	if len(deps) == 0 {
		return modelNotFound(er.model)
	}
	if err := modelAllowed(caller, er.model); err != nil {
		return err
	}
	fields := er.fields
	if settings.OutboundRedaction {
		switch {
		case g.redactor == nil:
			return problem.Unavailable("redaction_unavailable", "This tenant's inputs are redacted before they leave Warden, and no redactor is configured.", 0)
		case er.tokens:
			return problem.Invalid("unredactable_input", "This tenant's inputs are redacted before they leave Warden, and token arrays cannot be read for redaction: send the text.")
		}
		red, err := g.redactor.JSON(er.input)
		if err != nil {
			return invalid("The input could not be read for redaction.")
		}
		fields = make(map[string]json.RawMessage, len(er.fields))
		for k, v := range er.fields {
			fields[k] = v
		}
		fields["input"] = red
	}
	bodyBytes := forwardedSize(fields)
	deps = weighted(deps)
	var reserve, tokens int64
	for _, d := range deps {
		in := embedBound(d, bodyBytes, er.inputs)
		reserve, tokens = max(reserve, cost(d, in, 0)), max(tokens, in)
	}

	start := g.now()
	tk, err := g.limits.admit(caller.Key.ID, limits, tokens, start)
	g.rateLimitHeaders(w.Header(), caller.Key.ID, limits, start)
	if err != nil {
		return err
	}
	keep := settings.Content != ContentNone
	call := Call{ID: store.NewID(), TenantID: caller.Tenant.ID, KeyID: caller.Key.ID, Alias: er.model, Operation: OpEmbeddings,
		CreatedAt: start.UTC(), JourneyID: JourneyOf(ctx), ReservedMicros: reserve, Metadata: g.storedMetadata(tags)}
	w.Header().Set(HeaderRequestID, call.ID)
	span.call = &call
	if keep {
		if er.tokens {
			call.Prompt = fmt.Sprintf("%q", fmt.Sprintf("(%d token arrays, not kept)", er.inputs))
		} else {
			call.Prompt = g.recorderOf(ctx).storedJSON(ctx, er.input)
		}
	}
	if err := g.reserve(ctx, &call, tk, start); err != nil {
		return err
	}
	finish := g.finisher(ctx, &call, tk, keep, w, start) // reserve.go

	client := g.clientFor(allowedHosts)
	var last error = problem.Unavailable("upstream_unavailable", "No deployment of "+er.model+" answered.", time.Second)
	for _, d := range deps {
		t0 := g.now()
		status, raw, err := g.tryEmbeddings(ctx, client, d, fields)
		att := Attempt{Deployment: d.Name, Status: status, LatencyMS: g.now().Sub(t0).Milliseconds()}
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
				last = &problem.Error{Kind: problem.KindRateLimited, Code: "rate_limited", Message: "Every deployment of " + er.model + " is at its concurrency limit.", RetryAfter: time.Second}
			case errors.As(err, &bad):
				last = problem.New(problem.KindBadGateway, "upstream_invalid", "The model's answer was not an OpenAI embeddings list; nothing of it was passed on.")
			default:
				last = problem.Unavailable("upstream_unavailable", "No deployment of "+er.model+" answered.", time.Second)
			}
			continue
		}
		call.Deployment = d.Name
		if status != http.StatusOK {
			// The request itself is at fault: the agent sees the
			// upstream's answer, and nothing is charged.
			call.Attempts = append(call.Attempts, att)
			finish(StatusRejected, status)
			return upstreamRefusal(status, raw)
		}
		out, u := embedAnswer(raw, er.model)
		att.InputTokens, att.Usage = embedCharged(u, embedBound(d, bodyBytes, er.inputs))
		att.CostMicros = cost(d, att.InputTokens, 0)
		call.Attempts = append(call.Attempts, att)
		call.InputTokens, call.Usage, call.CostMicros = att.InputTokens, att.Usage, att.CostMicros
		call.TTFT = g.now().Sub(start)
		finish(StatusOK, http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
		return nil
	}
	finish(StatusFailed, problem.From(last).Status())
	return last
}

// tryEmbeddings calls one deployment's /embeddings within its timeout: a
// 200 with an embeddings list or a 4xx is returned with its body; a
// transient status, a redirect, a body that is not an embeddings list, a
// timeout or a connection failure is an error (the next deployment is
// tried).
func (g *Gateway) tryEmbeddings(ctx context.Context, client *http.Client, d Deployment, fields map[string]json.RawMessage) (int, []byte, error) {
	release, ok := g.acquire(d)
	if !ok {
		return 0, nil, errBusy
	}
	defer release()
	out := make(map[string]json.RawMessage, len(fields)+1)
	for k, v := range fields {
		out[k] = v
	}
	out["model"], _ = json.Marshal(d.UpstreamModel)
	body, _ := json.Marshal(out)
	cctx, cancel := context.WithTimeout(withAttempt(ctx, d), d.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, strings.TrimRight(d.BaseURL, "/")+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if d.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+d.APIKey)
	}
	timedOut := func(err error) error {
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("timeout after %s", d.Timeout)
		}
		return errors.New("connection: " + errorClass(err))
	}
	res, err := client.Do(hreq)
	if err != nil {
		return 0, nil, timedOut(err)
	}
	defer res.Body.Close()
	switch {
	case transient(res.StatusCode):
		return res.StatusCode, nil, fmt.Errorf("upstream %d", res.StatusCode)
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return res.StatusCode, nil, invalidAnswer{fmt.Sprintf("upstream %d: redirects are not followed", res.StatusCode)}
	case res.StatusCode != http.StatusOK:
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return res.StatusCode, raw, nil
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxEmbeddingAnswer+1))
	if err != nil {
		return res.StatusCode, nil, timedOut(err)
	}
	if len(raw) > maxEmbeddingAnswer {
		return res.StatusCode, nil, invalidAnswer{"larger than 256 MiB"}
	}
	if !isEmbeddingList(raw) {
		return res.StatusCode, nil, invalidAnswer{"not an embeddings list"}
	}
	return res.StatusCode, raw, nil
}

// isEmbeddingList reports whether raw is an embeddings answer: a JSON
// object with a list of data.
func isEmbeddingList(raw []byte) bool {
	var e struct {
		Data []json.RawMessage `json:"data"`
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &e) == nil && e.Data != nil
}

// embedAnswer is an upstream's embeddings list as the agent receives it
// (naming the alias, not the upstream's model id), and its usage (nil
// when none was reported).
func embedAnswer(raw []byte, alias string) ([]byte, *usage) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(raw, &resp) != nil {
		return raw, nil
	}
	var u *usage
	if ru, ok := resp["usage"]; ok && !isNull(ru) {
		var v usage
		if json.Unmarshal(ru, &v) == nil {
			u = &v
		}
	}
	resp["model"], _ = json.Marshal(alias)
	out, err := json.Marshal(resp)
	if err != nil {
		return raw, u
	}
	return out, u
}
