// Package policy decides whether a tool call may run: Warden's policy, in
// code, not the model's judgement (DESIGN.md principle 1). Deny by default:
// an unknown tool, a tool outside the key's scopes, a switched-off tool or
// arguments that fail the tool's schema are refused; a high-impact tool
// needs a human's approval before it runs.
package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wardenhq/warden/agent/tools"
)

// Refusal codes, as the API reports them.
const (
	CodeUnknownTool      = "tool_unknown"
	CodeNotInScope       = "tool_not_in_scope"
	CodeDisabled         = "tool_disabled"
	CodeInvalidArguments = "invalid_arguments"
)

// RuleHighImpact is the rule that sends high-impact calls to approval.
const RuleHighImpact = "high-impact tools need human approval (impact class high)"

// Decision is the outcome of a check.
type Decision struct {
	Allowed       bool
	Code          string // refusal code when not allowed
	Reason        string // a sentence for people
	NeedsApproval bool   // allowed, but only after approval
	Rule          string // the rule that required approval
	Facts         Facts  // the call's declared amount and target, when allowed
}

// Scope is what policy needs to know about the caller.
type Scope interface {
	Allows(kind, name string) bool
}

// Check decides one call. t is nil when the catalog has no such tool.
func Check(scope Scope, name string, t *tools.Tool, args json.RawMessage) Decision {
	switch {
	case t == nil:
		return Decision{Code: CodeUnknownTool, Reason: fmt.Sprintf("There is no tool %q in the catalog.", name)}
	case !scope.Allows("tool", t.Name):
		return Decision{Code: CodeNotInScope, Reason: fmt.Sprintf("The key's scopes do not include tool %q.", t.Name)}
	case !t.Enabled:
		return Decision{Code: CodeDisabled, Reason: fmt.Sprintf("Tool %q is switched off.", t.Name)}
	}
	if err := ValidateArgs(t.ArgsSchema, args); err != nil {
		return Decision{Code: CodeInvalidArguments, Reason: fmt.Sprintf("The arguments for %q do not match its schema: %v", t.Name, err)}
	}
	facts, err := ReadFacts(*t, args)
	if err != nil {
		return Decision{Code: CodeInvalidArguments, Reason: fmt.Sprintf("The arguments for %q are refused: %v.", t.Name, err)}
	}
	if t.Impact == tools.ImpactHigh {
		return Decision{Allowed: true, NeedsApproval: true, Rule: RuleHighImpact, Facts: facts}
	}
	return Decision{Allowed: true, Facts: facts}
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[[32]byte]*jsonschema.Schema{}
)

// compiled returns the compiled schema for its text, compiling once.
func compiled(schema json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{}`)
	}
	sum := sha256.Sum256(schema)
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[sum]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("tool.json")
	if err != nil {
		return nil, err
	}
	schemaCache[sum] = s
	return s, nil
}

// CompileSchema reports whether schema is a valid JSON Schema.
func CompileSchema(schema json.RawMessage) error {
	_, err := compiled(schema)
	return err
}

// ValidateArgs checks arguments against a tool's schema. Arguments must be
// a JSON object.
func ValidateArgs(schema, args json.RawMessage) error {
	s, err := compiled(schema)
	if err != nil {
		return fmt.Errorf("tool schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments are not JSON")
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object")
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s", firstLine(err.Error()))
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		rest := strings.TrimSpace(s[i+1:])
		s = strings.TrimSpace(s[:i])
		if rest != "" {
			s += " " + rest
		}
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
