package policy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

type scopes []string

func (s scopes) Allows(kind, name string) bool { return slices.Contains(s, kind+":"+name) }

func TestCheck(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string","pattern":"^ORD-[0-9]+$"}},"additionalProperties":false}`)
	lookup := &tools.Tool{Name: "lookup_order", Impact: risk.ImpactLow, Enabled: true, ArgsSchema: schema}
	refund := &tools.Tool{Name: "issue_refund", Impact: risk.ImpactHigh, Enabled: true, ArgsSchema: json.RawMessage(`{"type":"object"}`)}
	off := &tools.Tool{Name: "send_customer_email", Impact: risk.ImpactHigh, Enabled: false}
	key := scopes{"tool:lookup_order", "tool:issue_refund", "tool:send_customer_email"}
	good := json.RawMessage(`{"order_id":"ORD-1001"}`)

	tests := []struct {
		name     string
		scope    scopes
		tool     string
		t        *tools.Tool
		args     json.RawMessage
		allowed  bool
		approval bool
		code     string
	}{
		{"low tool in scope", key, "lookup_order", lookup, good, true, false, ""},
		{"unknown tool", key, "drop_tables", nil, good, false, false, CodeUnknownTool},
		{"not in scope", scopes{"tool:issue_refund"}, "lookup_order", lookup, good, false, false, CodeNotInScope},
		{"skill scope is not a tool scope", scopes{"skill:lookup_order"}, "lookup_order", lookup, good, false, false, CodeNotInScope},
		{"switched off", key, "send_customer_email", off, json.RawMessage(`{}`), false, false, CodeDisabled},
		{"missing argument", key, "lookup_order", lookup, json.RawMessage(`{}`), false, false, CodeInvalidArguments},
		{"wrong pattern", key, "lookup_order", lookup, json.RawMessage(`{"order_id":"1001"}`), false, false, CodeInvalidArguments},
		{"extra argument", key, "lookup_order", lookup, json.RawMessage(`{"order_id":"ORD-1","x":1}`), false, false, CodeInvalidArguments},
		{"not an object", key, "lookup_order", lookup, json.RawMessage(`["ORD-1"]`), false, false, CodeInvalidArguments},
		{"not JSON", key, "lookup_order", lookup, json.RawMessage(`{order`), false, false, CodeInvalidArguments},
		{"high impact needs approval", key, "issue_refund", refund, json.RawMessage(`{"amount_minor":1}`), true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Check(tt.scope, tt.tool, tt.t, tt.args)
			if d.Allowed != tt.allowed || d.NeedsApproval != tt.approval || d.Code != tt.code {
				t.Errorf("Check = allowed %v approval %v code %q; want %v %v %q (%s)", d.Allowed, d.NeedsApproval, d.Code, tt.allowed, tt.approval, tt.code, d.Reason)
			}
			if !d.Allowed && d.Reason == "" {
				t.Error("refusal without a reason")
			}
			if d.NeedsApproval && d.Rule != RuleHighImpact {
				t.Errorf("rule = %q", d.Rule)
			}
		})
	}
}

func TestCompileSchemaRejectsBadSchemas(t *testing.T) {
	for _, s := range []string{`{"type":"nonsense"}`, `{"required":"x"}`, `not json`} {
		if err := CompileSchema(json.RawMessage(s)); err == nil {
			t.Errorf("CompileSchema(%s) accepted a bad schema", s)
		}
	}
	if err := CompileSchema(nil); err != nil {
		t.Errorf("empty schema: %v", err)
	}
	if err := ValidateArgs(nil, json.RawMessage(`{"a":1}`)); err != nil {
		t.Errorf("empty schema accepts any object: %v", err)
	}
}

// TestSchemaErrorsNameTheFieldNotTheServer: what an agent (invalid
// arguments) and an admin (tool form) read names the place in the document
// and the rule, never where the server runs.
func TestSchemaErrorsNameTheFieldNotTheServer(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","required":["currency"],"properties":{"amount_minor":{"type":"integer","minimum":1},"currency":{"type":"string"}}}`)
	refund := &tools.Tool{Name: "issue_refund", Impact: risk.ImpactHigh, Enabled: true, ArgsSchema: schema}
	tests := []struct {
		name  string
		check func() string
		want  []string // substrings the message must contain
	}{
		{"argument below its minimum", func() string {
			return Check(scopes{"tool:issue_refund"}, "issue_refund", refund, json.RawMessage(`{"amount_minor":0,"currency":"USD"}`)).Reason
		}, []string{"/amount_minor", "minimum"}},
		{"missing argument", func() string {
			return errText(ValidateArgs(schema, json.RawMessage(`{"amount_minor":5}`)))
		}, []string{"top level", "missing property 'currency'"}},
		{"schema that breaks the metaschema", func() string {
			return errText(CompileSchema(json.RawMessage(`{"properties":{"amount_minor":{"type":"nonsense"}}}`)))
		}, []string{"/properties/amount_minor/type", "must be one of"}},
		{"reference to a missing definition", func() string {
			return errText(CompileSchema(json.RawMessage(`{"$ref":"#/$defs/missing"}`)))
		}, []string{"#/$defs/missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.check()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			for _, leak := range []string{"file://", wd, "tool.json", "warden:"} {
				if strings.Contains(msg, leak) {
					t.Errorf("message %q reveals %q", msg, leak)
				}
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSchemaReferencesStayInsideTheDocument: an admin-supplied schema
// cannot make the server read its own files or fetch URLs; references
// inside the document and the built-in metaschemas keep working.
func TestSchemaReferencesStayInsideTheDocument(t *testing.T) {
	// A readable file holding a valid schema: if the compiler read it,
	// the schema referring to it would compile.
	local := filepath.Join(t.TempDir(), "shared.json")
	if err := os.WriteFile(local, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		w.Write([]byte(`{"type":"object"}`))
	}))
	defer srv.Close()

	for _, schema := range []string{
		`{"$ref":"file:///etc/passwd"}`,
		`{"$ref":"http://127.0.0.1:1/x"}`,
		`{"$ref":"file://` + filepath.ToSlash(local) + `"}`,
		`{"properties":{"a":{"$ref":"` + srv.URL + `/shared.json"}}}`,
		`{"$schema":"` + srv.URL + `/meta.json"}`,
		`{"$ref":"shared.json"}`,
	} {
		err := CompileSchema(json.RawMessage(schema))
		if err == nil {
			t.Errorf("CompileSchema(%s) accepted a schema that references another document", schema)
			continue
		}
		if !strings.Contains(err.Error(), "may not reference other documents") {
			t.Errorf("CompileSchema(%s) = %q, want the other-documents refusal", schema, err)
		}
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the schema compiler fetched %d URLs, want 0", n)
	}

	internal := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"$ref":"#/$defs/positive"}},"$defs":{"positive":{"type":"integer","minimum":1}}}`)
	if err := CompileSchema(internal); err != nil {
		t.Fatalf("a schema with an internal $ref and the 2020-12 $schema does not compile: %v", err)
	}
	if err := ValidateArgs(internal, json.RawMessage(`{"n":2}`)); err != nil {
		t.Errorf("valid arguments refused through an internal $ref: %v", err)
	}
	if err := ValidateArgs(internal, json.RawMessage(`{"n":0}`)); err == nil || !strings.Contains(err.Error(), "/n") {
		t.Errorf("invalid arguments through an internal $ref: %v, want an error naming /n", err)
	}
	// The metaschema is still applied (it is built in, not loaded).
	if err := CompileSchema(json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"nonsense"}`)); err == nil {
		t.Error("a schema breaking the 2020-12 metaschema compiles")
	}
	if err := CompileSchema(json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)); err != nil {
		t.Errorf("a draft-07 schema does not compile: %v", err)
	}
}
