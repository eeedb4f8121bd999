package approvals

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/tracing"
)

var tracer = tracing.Tracer("approvals")

// startWait starts the span of an agent's long poll for a decision.
func startWait(ctx context.Context, id string, until time.Time) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Off(ctx)
	}
	return tracer.Start(ctx, "approval wait", trace.WithAttributes(
		attribute.String("warden.action.id", id),
		attribute.Int64("warden.wait.max_ms", time.Until(until).Milliseconds())))
}

// endWait records what the wait ended with — the action's status
// (still pending at the deadline, or decided) — and ends the span.
func endWait(span trace.Span, a Action, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	switch {
	case err == nil:
		span.SetAttributes(attribute.String("warden.action.status", a.Status),
			attribute.String("warden.tool", a.Tool), attribute.Bool("warden.action.decided", a.Status != StatusPending))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		tracing.Fail(span, "cancelled")
	case errors.Is(err, store.ErrNotFound):
		tracing.Fail(span, "not_found")
	default:
		tracing.Fail(span, "_OTHER")
	}
}
