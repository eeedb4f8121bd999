package models

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/platform/tracing"
)

// A call through the gateway is a span "chat ALIAS" following the
// OpenTelemetry GenAI conventions, with a child span "chat UPSTREAM" per
// upstream attempt whose context the upstream receives as its
// traceparent. Their attributes are the alias, deployment names, token
// counts, statuses and ids: never the prompt, the completion or the
// agent's tags.

var tracer = tracing.Tracer("models")

// providerName is gen_ai.provider.name: every deployment speaks OpenAI's
// protocol (ProviderOpenAI), whoever serves it.
const providerName = "openai"

// chatSpan is the span of one gateway call.
type chatSpan struct {
	span trace.Span
	op   string // gen_ai.operation.name: OperationChat or OperationEmbeddings
	call *Call  // the call's record once Chat made it; read at the end

	mu       sync.Mutex
	upstream map[string]string // deployment name → its upstream model, of the attempts made
}

type chatSpanKey struct{}

// startChat starts the span of one chat call; Chat names it once the
// alias is read (request) and ends it on return (end).
func startChat(ctx context.Context) (context.Context, *chatSpan) {
	return startCall(ctx, tracing.OperationChat)
}

// startCall starts the span of one gateway call of operation op (an
// embeddings call is "embeddings ALIAS"), named once the alias is read.
func startCall(ctx context.Context, op string) (context.Context, *chatSpan) {
	if !tracing.Enabled() {
		_, off := tracing.Off(ctx)
		return ctx, &chatSpan{span: off, op: op}
	}
	ctx, span := tracer.Start(ctx, op, trace.WithAttributes(
		tracing.GenAIOperationName.String(op),
		tracing.GenAIProviderName.String(providerName),
		tracing.GenAISystem.String(providerName)))
	cs := &chatSpan{span: span, op: op}
	if !span.IsRecording() {
		return ctx, cs
	}
	return context.WithValue(ctx, chatSpanKey{}, cs), cs
}

// request names the span after the alias asked for and records the
// output cap asked for.
func (cs *chatSpan) request(req request) {
	if !cs.span.IsRecording() {
		return
	}
	cs.model(req.Model)
	switch {
	case req.MaxCompletionTokens != nil:
		cs.span.SetAttributes(tracing.GenAIRequestMaxTokens.Int64(*req.MaxCompletionTokens))
	case req.MaxTokens != nil:
		cs.span.SetAttributes(tracing.GenAIRequestMaxTokens.Int64(*req.MaxTokens))
	}
}

// model names the span after the alias asked for.
func (cs *chatSpan) model(alias string) {
	if !cs.span.IsRecording() {
		return
	}
	cs.span.SetName(cs.op + " " + alias)
	cs.span.SetAttributes(tracing.GenAIRequestModel.String(alias))
}

// end records how the call went and ends the span.
func (cs *chatSpan) end(err error) {
	defer cs.span.End()
	if !cs.span.IsRecording() {
		return
	}
	if c := cs.call; c != nil {
		attrs := []attribute.KeyValue{
			attribute.String("warden.model_call.id", c.ID),
			attribute.String("warden.tenant.id", c.TenantID),
			attribute.String("warden.key.id", c.KeyID),
			attribute.Bool("warden.cache_hit", c.CacheHit),
			attribute.Bool("warden.stream", c.Stream),
			attribute.Int("warden.attempts", len(c.Attempts)),
			attribute.Int64("warden.cost_micros", c.CostMicros),
		}
		if c.Status != "" {
			attrs = append(attrs, attribute.String("warden.model_call.status", c.Status))
		}
		if c.JourneyID != "" {
			attrs = append(attrs, attribute.String("warden.journey.id", c.JourneyID))
		}
		if c.Deployment != "" {
			attrs = append(attrs, attribute.String("warden.deployment", c.Deployment))
			cs.mu.Lock()
			if m, ok := cs.upstream[c.Deployment]; ok {
				attrs = append(attrs, tracing.GenAIResponseModel.String(m))
			}
			cs.mu.Unlock()
		}
		if c.InputTokens > 0 || c.OutputTokens > 0 {
			attrs = append(attrs, tracing.GenAIUsageInputTokens.Int64(c.InputTokens),
				tracing.GenAIUsageOutputTokens.Int64(c.OutputTokens), attribute.String("warden.usage.source", c.Usage))
		}
		cs.span.SetAttributes(attrs...)
		if err == nil && c.Status != "" && c.Status != StatusOK {
			tracing.Fail(cs.span, c.Status) // a stream cut after its first bytes
		}
	}
	if err != nil {
		tracing.Fail(cs.span, tracing.ErrorType(err))
	}
}

// attempt is what an upstream attempt's span knows of its deployment.
type attempt struct {
	deployment, upstreamModel string
	op                        string // the call's operation
}

type attemptKey struct{}

// withAttempt marks ctx as one attempt of d, for the upstream client's
// transport (tracedTransport) to start its span.
func withAttempt(ctx context.Context, d Deployment) context.Context {
	cs, ok := ctx.Value(chatSpanKey{}).(*chatSpan)
	if !ok {
		return ctx
	}
	cs.mu.Lock()
	if cs.upstream == nil {
		cs.upstream = map[string]string{}
	}
	cs.upstream[d.Name] = d.UpstreamModel
	cs.mu.Unlock()
	return context.WithValue(ctx, attemptKey{}, attempt{deployment: d.Name, upstreamModel: d.UpstreamModel, op: cs.op})
}

// tracedTransport spans each upstream attempt, from the request until its
// body is closed (the whole stream, for a streamed answer), and sends the
// attempt's trace context as traceparent.
type tracedTransport struct{ next http.RoundTripper }

func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a, ok := req.Context().Value(attemptKey{}).(attempt)
	if !ok {
		return t.next.RoundTrip(req)
	}
	attrs := []attribute.KeyValue{
		tracing.GenAIOperationName.String(a.op),
		tracing.GenAIProviderName.String(providerName),
		tracing.GenAISystem.String(providerName),
		tracing.GenAIRequestModel.String(a.upstreamModel),
		attribute.String("warden.deployment", a.deployment),
		semconv.HTTPRequestMethodKey.String(req.Method),
		semconv.ServerAddress(req.URL.Hostname()),
	}
	if p, err := strconv.Atoi(req.URL.Port()); err == nil {
		attrs = append(attrs, semconv.ServerPort(p))
	}
	ctx, span := tracer.Start(req.Context(), a.op+" "+a.upstreamModel,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	// A RoundTripper must not change the caller's request.
	req = req.Clone(ctx)
	tracing.Inject(ctx, req.Header)
	res, err := t.next.RoundTrip(req)
	if err != nil {
		tracing.Fail(span, transportErrorType(err))
		span.End()
		return nil, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
	if res.StatusCode >= 400 {
		tracing.Fail(span, strconv.Itoa(res.StatusCode))
	} else {
		span.SetAttributes(tracing.GenAIResponseModel.String(a.upstreamModel))
	}
	res.Body = &spanBody{ReadCloser: res.Body, span: span}
	return res, nil
}

// CloseIdleConnections closes the idle connections of the transport
// underneath (http.Client.CloseIdleConnections, when the allowed hosts
// change).
func (t tracedTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// transportErrorType is error.type of an attempt that got no answer.
func transportErrorType(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "connection"
}

// spanBody ends the attempt's span when the answer's body is closed.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.span.End() })
	return err
}
