// Package policy decides whether a tool call may run: Warden's policy, in
// code, not the model's judgement. Deny by default:
// an unknown tool, a tool outside the key's scopes, a switched-off tool or
// arguments that fail the tool's schema are refused; a high-impact tool
// needs a human's approval before it runs.
package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

// Refusal codes, as the API reports them.
const (
	CodeUnknownTool      = "tool_unknown"
	CodeNotInScope       = "tool_not_in_scope"
	CodeDisabled         = "tool_disabled"
	CodeInvalidArguments = "invalid_arguments"
)

// kinds says what sort of refusal each code is.
var kinds = map[string]problem.Kind{
	CodeUnknownTool:      problem.KindForbidden,
	CodeNotInScope:       problem.KindForbidden,
	CodeDisabled:         problem.KindForbidden,
	CodeInvalidArguments: problem.KindInvalid,
}

// Refusal is a refused decision as the error every door reports.
func (d Decision) Refusal() *problem.Error {
	return problem.New(kinds[d.Code], d.Code, d.Reason)
}

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
	if err := UniqueMembers(args); err != nil {
		return Decision{Code: CodeInvalidArguments, Reason: fmt.Sprintf("The arguments for %q are refused: %v.", t.Name, err)}
	}
	if err := ValidateArgs(t.ArgsSchema, args); err != nil {
		return Decision{Code: CodeInvalidArguments, Reason: fmt.Sprintf("The arguments for %q do not match its schema: %v", t.Name, err)}
	}
	facts, err := ReadFacts(*t, args)
	if err != nil {
		return Decision{Code: CodeInvalidArguments, Reason: fmt.Sprintf("The arguments for %q are refused: %v.", t.Name, err)}
	}
	if t.Impact == risk.ImpactHigh {
		return Decision{Allowed: true, NeedsApproval: true, Rule: RuleHighImpact, Facts: facts}
	}
	return Decision{Allowed: true, Facts: facts}
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[[32]byte]*jsonschema.Schema{}
)

// schemaURL is the name a tool schema is compiled under. It is an absolute
// URL that means nothing on this server: a relative name would be resolved
// against the working directory into a file:// URL, and that path would
// appear in error messages.
const schemaURL = "warden:///tool-schema.json"

// errExternalRef is the refusal of any $ref, $dynamicRef or $schema that
// points outside the schema document.
var errExternalRef = errors.New(`the schema may not reference other documents; define shared parts under "$defs" and refer to them as "#/$defs/name"`)

// refuseLoading is the compiler's URL loader. Admins write tool schemas,
// and the library's default loader would read file:// references from this
// server's disk (and a custom loader could reach the network), so every
// document a schema names outside itself is refused. The JSON Schema
// metaschemas are built into the library and never reach the loader.
type refuseLoading struct{}

func (refuseLoading) Load(string) (any, error) { return nil, errExternalRef }

var printer = message.NewPrinter(language.English)

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
	c.UseLoader(refuseLoading{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, compileError(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, compileError(err)
	}
	schemaCache[sum] = s
	return s, nil
}

// compileError says why a schema does not compile, in terms of the schema
// itself: the place in it and the rule it breaks.
func compileError(err error) error {
	var load *jsonschema.LoadURLError
	var missing *jsonschema.JSONPointerNotFoundError
	var invalid *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	switch {
	case errors.As(err, &load):
		return errExternalRef
	case errors.As(err, &missing):
		return fmt.Errorf("the schema refers to %q, which it does not contain", strings.TrimPrefix(missing.URL, schemaURL))
	case errors.As(err, &invalid) && errors.As(invalid.Err, &verr):
		return errors.New(describe(verr))
	}
	return errors.New(clip(strings.ReplaceAll(err.Error(), schemaURL, "")))
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
		var verr *jsonschema.ValidationError
		if errors.As(err, &verr) {
			return errors.New(describe(verr))
		}
		return errors.New(clip(strings.ReplaceAll(err.Error(), schemaURL, "")))
	}
	return nil
}

// describe lists the rules a document breaks, each with the JSON pointer
// of the value that breaks it: "at /amount_minor: minimum: got 0, want 1".
// Only the innermost errors are rules; the ones around them merely say
// which schema or reference failed, by URL.
func describe(e *jsonschema.ValidationError) string {
	var rules []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := strings.ReplaceAll(e.ErrorKind.LocalizedString(printer), schemaURL, "")
			rules = append(rules, "at "+pointer(e.InstanceLocation)+": "+msg)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(e)
	if len(rules) == 0 {
		return "the document does not match the schema"
	}
	return clip(strings.Join(rules, "; "))
}

// pointer writes an instance location as a JSON pointer (RFC 6901).
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "the top level"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// clip keeps a message to one line of at most 300 bytes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= 300 {
		return s
	}
	s = s[:300]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
