// Package tracing sends Warden's OpenTelemetry traces to an OTLP/HTTP
// collector (Jaeger, Grafana Tempo, Langfuse; docs/tracing.md), and
// carries W3C trace context in from agents and out to upstreams.
//
// The server starts it once when WARDEN_OTLP_ENDPOINT is set, and flushes
// it when it stops:
//
//	shutdown, err := tracing.Start(ctx, tracing.Options{Endpoint: cfg.OTLPEndpoint, Headers: cfg.OTLPHeaders, Version: version})
//	defer shutdown(context.Background())
//
// Packages take their tracer from Tracer and start spans as usual; until
// Start runs (and when it never does, and after shutdown) the spans are
// OpenTelemetry's no-op ones and record nothing. The provider is Warden's
// own, not OpenTelemetry's global one.
//
//	ctx, span := tracing.Tracer("journeys").Start(ctx, "journey")
//	defer span.End()
//
// Span attributes are ids, names, counts and statuses only: never a
// prompt, a completion, tool arguments or any other text a person wrote.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/wardenhq/warden/platform/problem"
)

// Options configure the exporter.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP base URL, such as
	// http://localhost:4318; spans are POSTed to Endpoint/v1/traces (an
	// Endpoint ending in /v1/traces is used as it is).
	Endpoint string
	// Headers are sent with every export, such as Authorization for
	// Langfuse. They are secrets: never logged.
	Headers map[string]string
	// Version is the service.version of the resource.
	Version string
	// Log receives the exporter's failures (a collector that does not
	// answer); nil is slog.Default.
	Log *slog.Logger
}

// provider is the tracer provider Start installed; nil while tracing is
// off. It is Warden's own, not OpenTelemetry's global one: libraries that
// trace through the global provider (the OIDC library does) record
// nothing, and their attributes, which nobody reviewed for personal
// data, are never exported. A process may start and stop tracing more
// than once (tests run several servers); tracers handed out before follow.
var provider atomic.Pointer[sdktrace.TracerProvider]

// Enabled reports whether spans are exported; trace context is read
// from agents and sent on only then.
func Enabled() bool { return provider.Load() != nil }

// Start installs a tracer provider that batches spans to o.Endpoint
// over OTLP/HTTP, for every tracer of Tracer, and returns the function
// that flushes the spans still buffered and stops it. The resource is
// service.name=warden and service.version=o.Version, with the SDK's and
// OTEL_RESOURCE_ATTRIBUTES'. Spans of an agent
// whose traceparent says it does not sample are not recorded either
// (parent-based sampling); every other span is.
func Start(ctx context.Context, o Options) (shutdown func(context.Context) error, err error) {
	if o.Endpoint == "" {
		return nil, errors.New("tracing: no endpoint")
	}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(TracesURL(o.Endpoint)),
		otlptracehttp.WithHeaders(o.Headers),
		otlptracehttp.WithTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("tracing: exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("warden"), semconv.ServiceVersion(o.Version)))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("traces not exported", "err", err)
	}))
	provider.Store(tp)
	return func(ctx context.Context) error {
		provider.CompareAndSwap(tp, nil)
		return tp.Shutdown(ctx)
	}, nil
}

// scopePrefix is the instrumentation scope of every tracer Tracer hands
// out.
const scopePrefix = "github.com/wardenhq/warden/"

// TracesURL is where spans are sent for an OTLP/HTTP base URL, as the
// OpenTelemetry exporters read OTEL_EXPORTER_OTLP_ENDPOINT.
func TracesURL(endpoint string) string {
	e := strings.TrimRight(endpoint, "/")
	if strings.HasSuffix(e, "/v1/traces") {
		return e
	}
	return e + "/v1/traces"
}

// Off is ctx with a span that records nothing, for a package's start
// function to return when tracing is off, before it builds any
// attribute: without WARDEN_OTLP_ENDPOINT a span costs one atomic load.
func Off(ctx context.Context) (context.Context, trace.Span) { return ctx, noop.Span{} }

// Tracer is the tracer of one Warden package (its import path under the
// module): its spans go to the provider Start installed, and record
// nothing while there is none.
func Tracer(pkg string) trace.Tracer {
	return &tracer{name: scopePrefix + pkg}
}

// tracer starts spans with the tracer of the provider installed when
// each span starts.
type tracer struct {
	embedded.Tracer
	name   string
	cached atomic.Pointer[providerTracer]
}

type providerTracer struct {
	tp *sdktrace.TracerProvider
	t  trace.Tracer
}

var off = noop.NewTracerProvider().Tracer("")

func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	tp := provider.Load()
	if tp == nil {
		return off.Start(ctx, name, opts...)
	}
	c := t.cached.Load()
	if c == nil || c.tp != tp {
		c = &providerTracer{tp: tp, t: tp.Tracer(t.name)}
		t.cached.Store(c)
	}
	return c.t.Start(ctx, name, opts...)
}

var propagator = propagation.TraceContext{}

// Extract returns ctx with the W3C trace context of h (traceparent,
// tracestate) as the remote parent of the spans started under it; ctx as
// it is when tracing is off or h carries none.
func Extract(ctx context.Context, h http.Header) context.Context {
	if !Enabled() || h.Get("traceparent") == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject writes the trace context of ctx's span into h (traceparent), so
// the receiver's spans join the trace; nothing when ctx has no span.
func Inject(ctx context.Context, h http.Header) {
	if !Enabled() {
		return
	}
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// Transport returns rt (http.DefaultTransport when nil) sending the trace
// context of each request's context with it.
func Transport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &transport{next: rt}
}

type transport struct{ next http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if Enabled() && trace.SpanContextFromContext(req.Context()).IsValid() {
		// A RoundTripper must not change the caller's request.
		req = req.Clone(req.Context())
		Inject(req.Context(), req.Header)
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the transport
// underneath (http.Client.CloseIdleConnections).
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// ErrorType is error.type for err: a *problem.Error's code (such as
// budget_exhausted), or "_OTHER" (the conventions' fallback) for an
// error without one.
func ErrorType(err error) string {
	var p *problem.Error
	if errors.As(err, &p) && p.Code != "" {
		return p.Code
	}
	return "_OTHER"
}

// Fail marks span failed with errorType (error.type: a code or class such
// as "upstream_unavailable" or "timeout", never a message that may carry
// what a person wrote).
func Fail(span trace.Span, errorType string) {
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType))
	span.SetStatus(codes.Error, errorType)
}
