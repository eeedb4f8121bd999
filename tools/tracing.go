package tools

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wardenhq/warden/platform/tracing"
)

var tracer = tracing.Tracer("tools")

// startCall starts the span of one guarded tool call ("execute_tool
// NAME", the GenAI conventions' name), a child of the journey or of the
// approved action's execution. Neither the arguments nor the result are
// recorded; the idempotency key is not either (it is derived from the
// arguments).
func startCall(ctx context.Context, t Tool, name string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Off(ctx)
	}
	return tracer.Start(ctx, tracing.OperationExecuteTool+" "+name, trace.WithAttributes(
		tracing.GenAIOperationName.String(tracing.OperationExecuteTool),
		tracing.GenAIToolName.String(name),
		attribute.String("warden.tool.provider", t.Provider),
		attribute.String("warden.tool.impact", string(t.Impact))))
}

// endCall records the attempts made and the failure's kind, and ends the
// span.
func endCall(span trace.Span, attempts int, res Result, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.Int("warden.tool.attempts", attempts), attribute.Int64("warden.tool.units", res.Units))
	if err != nil {
		kind := "_OTHER"
		var te *Error
		if errors.As(err, &te) {
			kind = string(te.Kind)
		}
		tracing.Fail(span, kind)
	}
}
