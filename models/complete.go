package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Complete is the chat gateway for Warden's own callers (the runtime's
// model-driven skills and its model router): one non-streamed completion
// through exactly the path of POST /v1/chat/completions — the same scope
// check, budget reservation and settlement, fallover and redacted trace in
// model_calls. A journey id in ctx (WithJourney) links the trace to the
// journey.
//
//	resp, err := g.Complete(models.WithJourney(ctx, journeyID), caller, models.ChatRequest{
//		Model:    "gpt-small",
//		Messages: []models.Message{{Role: "system", Content: "..."}, {Role: "user", Content: "..."}},
//		Tools:    []models.Tool{models.FunctionTool("lookup_order", "Look an order up.", schema)},
//	})
//
// A refusal (scope, budget, no deployment, every deployment down, a 4xx
// from the upstream) is the *problem.Error the HTTP route would render.
func (g *Gateway) Complete(ctx context.Context, caller admission.Caller, req ChatRequest) (ChatResponse, error) {
	req.Stream = false
	body, err := json.Marshal(req)
	if err != nil {
		return ChatResponse{}, fmt.Errorf("complete: %w", err)
	}
	sink := &memSink{header: http.Header{}}
	if err := g.Chat(ctx, caller, body, sink); err != nil {
		return ChatResponse{}, err
	}
	if sink.status != http.StatusOK {
		return ChatResponse{}, problem.Unavailable("upstream_unavailable", fmt.Sprintf("The model answered with status %d.", sink.status), time.Second)
	}
	var resp ChatResponse
	if err := json.Unmarshal(sink.body.Bytes(), &resp); err != nil {
		return ChatResponse{}, problem.Unavailable("upstream_invalid", "The model's answer is not a chat completion.", time.Second).Wrap(err)
	}
	if len(resp.Choices) == 0 {
		return ChatResponse{}, problem.Unavailable("upstream_invalid", "The model's answer has no choice.", time.Second)
	}
	return resp, nil
}

// ChatRequest is an OpenAI chat completion request, as far as Warden's
// own callers need one.
type ChatRequest struct {
	Model     string    `json:"model"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	MaxTokens int64     `json:"max_tokens,omitempty"`
	// Temperature is always sent: Warden's own calls are deterministic
	// (0) unless asked otherwise.
	Temperature float64 `json:"temperature"`
	Stream      bool    `json:"stream,omitempty"`
}

// Message is one message of a conversation. Content is null in an
// assistant message that only calls tools.
type Message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// Text is a message's content, "" when it has none.
func (m Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// TextMessage is a message with text content.
func TextMessage(role, text string) Message { return Message{Role: role, Content: &text} }

// ToolCall is a model's request to call a function.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // JSON text, as the model wrote it
	} `json:"function"`
}

// Tool is a function the model may ask for.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// FunctionTool describes a function by its name, description and the JSON
// Schema of its arguments.
func FunctionTool(name, description string, parameters json.RawMessage) Tool {
	t := Tool{Type: "function"}
	t.Function.Name, t.Function.Description, t.Function.Parameters = name, description, parameters
	return t
}

// ChatResponse is an OpenAI chat completion.
type ChatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int     `json:"index"`
		Message      Message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// Message is the first choice's message.
func (r ChatResponse) Message() Message { return r.Choices[0].Message }

type journeyKey struct{}

// WithJourney marks the model calls made with ctx as the journey's.
func WithJourney(ctx context.Context, journeyID string) context.Context {
	return context.WithValue(ctx, journeyKey{}, journeyID)
}

// JourneyOf is the journey WithJourney put in ctx, or "".
func JourneyOf(ctx context.Context) string {
	id, _ := ctx.Value(journeyKey{}).(string)
	return id
}

// memSink keeps an answer in memory.
type memSink struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (m *memSink) Header() http.Header { return m.header }
func (m *memSink) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}
func (m *memSink) Write(p []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(p)
}
func (m *memSink) Flush() {}

// JourneyCall is a model call as a journey's trace shows it.
type JourneyCall struct {
	ID           string
	Alias        string
	Deployment   string
	Status       string
	InputTokens  int64
	OutputTokens int64
	CostMicros   int64
	TenantID     string
}

// CallsOfJourney lists the model calls a journey made, oldest first.
func CallsOfJourney(ctx context.Context, q store.Querier, journeyID string) ([]JourneyCall, error) {
	if journeyID == "" {
		return nil, errors.New("calls of journey: no journey id")
	}
	out, err := store.Query(ctx, q, func(s store.Scanner) (JourneyCall, error) {
		var c JourneyCall
		err := s.Scan(&c.ID, &c.Alias, &c.Deployment, &c.Status, &c.InputTokens, &c.OutputTokens, &c.CostMicros, &c.TenantID)
		return c, err
	}, `SELECT id, alias, deployment, status, input_tokens, output_tokens, cost_micros, tenant_id
		FROM model_calls WHERE journey_id = ? ORDER BY created_at, id`, journeyID)
	if err != nil {
		return nil, fmt.Errorf("calls of journey %s: %w", journeyID, err)
	}
	return out, nil
}
