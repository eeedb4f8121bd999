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

// traceDecided records an action's time pending, from its proposal to
// the final decision, as a span: the decision comes from a person in the
// console, long after the agent's request, so the span is in the
// decision's trace, not the agent's (its ids name the action and the
// journey to look up).
func traceDecided(ctx context.Context, a Action, now time.Time) {
	if !tracing.Enabled() {
		return
	}
	_, span := tracer.Start(ctx, "approval "+a.Tool, trace.WithTimestamp(a.CreatedAt), trace.WithAttributes(
		attribute.String("warden.action.id", a.ID),
		attribute.String("warden.tenant.id", a.TenantID),
		attribute.String("warden.tool", a.Tool),
		attribute.String("warden.tool.impact", string(a.Impact)),
		attribute.String("warden.action.status", a.Status),
		attribute.Int("warden.approvals.given", a.ApprovalsGiven),
		attribute.Int("warden.approvals.required", a.ApprovalsRequired)))
	if a.JourneyID != "" {
		span.SetAttributes(attribute.String("warden.journey.id", a.JourneyID))
	}
	span.End(trace.WithTimestamp(now))
}
