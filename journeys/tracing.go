package journeys

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/platform/tracing"
)

var tracer = tracing.Tracer("journeys")

// startJourney starts the span of one journey run, a child of the agent's
// span when its request carried a traceparent. Its tool calls and model
// calls are its children.
func startJourney(ctx context.Context, req Request) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Off(ctx)
	}
	ctx, span := tracer.Start(ctx, "journey", trace.WithAttributes(
		attribute.String("warden.tenant.id", req.Caller.Tenant.ID),
		attribute.String("warden.key.id", req.Caller.Key.ID)))
	if req.Skill != "" && span.IsRecording() {
		span.SetAttributes(attribute.String("warden.skill.requested", req.Skill))
	}
	return ctx, span
}

// endJourney records the journey's id, skill, status and cost, and ends
// the span. The input, output and the steps' arguments are not recorded.
func endJourney(span trace.Span, out Outcome, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	j := out.Journey
	if j.ID != "" {
		span.SetName("journey " + j.Skill)
		if j.Skill == "" {
			span.SetName("journey")
		}
		span.SetAttributes(
			attribute.String("warden.journey.id", j.ID),
			attribute.String("warden.skill", j.Skill),
			attribute.String("warden.journey.status", j.Status),
			attribute.String("warden.release", j.Release),
			attribute.Int("warden.journey.steps", len(j.Steps)),
			attribute.Int64("warden.cost_micros", j.Cost.TotalMicros),
		)
	}
	if out.Action != nil {
		span.SetAttributes(attribute.String("warden.action.id", out.Action.ID))
	}
	if err != nil {
		tracing.Fail(span, tracing.ErrorType(err))
	}
}

// startContinue starts the span of a model-driven journey's continuation
// after its approved action executed: a job, long after the agent's
// request, so a trace of its own named by the journey's id.
func startContinue(ctx context.Context, journeyID string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Off(ctx)
	}
	return tracer.Start(ctx, "journey continue", trace.WithAttributes(attribute.String("warden.journey.id", journeyID)))
}

func endContinue(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		tracing.Fail(span, tracing.ErrorType(err))
	}
	span.End()
}
