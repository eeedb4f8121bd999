package tracing

import "go.opentelemetry.io/otel/attribute"

// Attributes of the OpenTelemetry GenAI semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/gen-ai/), which the
// semconv package of the SDK's version does not carry yet.
const (
	GenAIOperationName     = attribute.Key("gen_ai.operation.name")     // "chat", "execute_tool"
	GenAIProviderName      = attribute.Key("gen_ai.provider.name")      // "openai"
	GenAISystem            = attribute.Key("gen_ai.system")             // the older name of gen_ai.provider.name, still read by some backends
	GenAIRequestModel      = attribute.Key("gen_ai.request.model")      // the model asked for
	GenAIResponseModel     = attribute.Key("gen_ai.response.model")     // the model that answered
	GenAIRequestMaxTokens  = attribute.Key("gen_ai.request.max_tokens") // the output cap asked for
	GenAIUsageInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	GenAIUsageOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	GenAIToolName          = attribute.Key("gen_ai.tool.name")
)

// Operation names (gen_ai.operation.name).
const (
	OperationChat        = "chat"
	OperationEmbeddings  = "embeddings"
	OperationExecuteTool = "execute_tool"
)
