package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A cascade escalates when an answer fails its check (see AliasSettings).
// checkAnswer returns why the answer in raw (a chat completion) fails, or
// "" when it passes. The reason never quotes the answer: it is written to
// the trace.
func checkAnswer(raw []byte, responseFormat json.RawMessage) string {
	var resp struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content   *string         `json:"content"`
				Refusal   *string         `json:"refusal"`
				ToolCalls json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &resp) != nil || len(resp.Choices) == 0 {
		return "no answer"
	}
	c := resp.Choices[0]
	if (c.Message.Refusal != nil && *c.Message.Refusal != "") || c.FinishReason == "content_filter" {
		return "refused"
	}
	if t := bytes.TrimSpace(c.Message.ToolCalls); len(t) > 0 && !bytes.Equal(t, []byte("null")) && !bytes.Equal(t, []byte("[]")) {
		return "" // a tool call is an answer
	}
	content := ""
	if c.Message.Content != nil {
		content = *c.Message.Content
	}
	if strings.TrimSpace(content) == "" {
		return "empty answer"
	}
	schema := jsonSchemaOf(responseFormat)
	if schema == nil {
		return ""
	}
	s, err := compileSchema(schema)
	if err != nil {
		return "" // the upstream judges the schema; Warden cannot
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
	if err != nil {
		return "answer is not JSON"
	}
	if s.Validate(v) != nil {
		return "answer does not match the response_format schema"
	}
	return ""
}

// jsonSchemaOf returns the schema of a response_format of type
// json_schema, or nil.
func jsonSchemaOf(responseFormat json.RawMessage) json.RawMessage {
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if len(responseFormat) == 0 || json.Unmarshal(responseFormat, &rf) != nil || rf.Type != "json_schema" || len(rf.JSONSchema.Schema) == 0 {
		return nil
	}
	return rf.JSONSchema.Schema
}

const schemaURL = "warden:///response-format.json"

// noLoading refuses every document a schema names outside itself: an
// agent's schema must not make Warden read files or the network.
type noLoading struct{}

func (noLoading) Load(string) (any, error) {
	return nil, errors.New("the schema may not reference other documents")
}

func compileSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoading{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}
