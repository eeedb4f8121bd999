package execution

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/tracing"
)

var tracer = tracing.Tracer("execution")

// startExecute starts the span of one run of an approved action's
// execution job; the tool call through the guard is its child. The job
// runs long after the agent's request, so it starts a trace of its own,
// named by the action's id.
func startExecute(ctx context.Context, actionID string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Off(ctx)
	}
	return tracer.Start(ctx, "execute action", trace.WithAttributes(attribute.String("warden.action.id", actionID)))
}

// noteAction names the span after the action's tool, once it is read.
func noteAction(ctx context.Context, a approvals.Action) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName("execute action " + a.Tool)
	span.SetAttributes(attribute.String("warden.tool", a.Tool), attribute.String("warden.tenant.id", a.TenantID),
		attribute.String("warden.action.status", a.Status))
}

// endExecute ends the span; a run that failed is marked "transient" (the
// job runs again with the same key) or "permanent".
func endExecute(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		kind := "transient"
		var p *jobs.Permanent
		if errors.As(err, &p) {
			kind = "permanent"
		}
		tracing.Fail(span, kind)
	}
	span.End()
}
