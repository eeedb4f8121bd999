package models

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/redact"
)

// A recorder redacts what one call's record keeps (its prompt, its
// completion, a stored response): with the tenant's allow-list (or the
// redactor of the journey the call is made for, WithRedactor), the
// structure of the messages read as JSON — a tool call's arguments and a
// tool's result are JSON documents, scanned member by member with values
// split across sibling members joined — and the fields a tool declares
// personal (x-warden-personal) tokenised whole. A function's declaration
// comes from the request's own tools (their parameters' schemas) or, for
// a function the request does not describe with marks, from the catalog
// tool of that name.
type recorder struct {
	g    *Gateway
	red  *redact.Redactor // nil: nothing is recorded
	decl map[string]*redact.Declared

	mu      sync.Mutex
	catalog map[string]*redact.Declared // looked up once a call
}

type recorderKey struct{}

// WithRedactor makes the records of the calls made with ctx, and what is
// logged with it, redacted by red instead of the tenant's: a journey
// passes its own (its tenant's allow-list and the values its request
// marked personal). It is redact.NewContext.
func WithRedactor(ctx context.Context, red *redact.Redactor) context.Context {
	return redact.NewContext(ctx, red)
}

// withRecorder is ctx carrying the recorder of one call of tenantID whose
// request described tools (the "tools" and "functions" members of a chat
// request, a Responses request's "tools"). A recorder already in ctx (a
// Responses call translated to chat) is kept.
func (g *Gateway) withRecorder(ctx context.Context, tenantID string, tools ...json.RawMessage) context.Context {
	if _, ok := ctx.Value(recorderKey{}).(*recorder); ok {
		return ctx
	}
	rc := &recorder{g: g}
	if g.redactor != nil {
		if red, ok := redact.FromContext(ctx); ok {
			rc.red = red
		} else {
			rc.red = allowlist.Redactor(ctx, g.db.Read(), g.redactor, tenantID)
			ctx = redact.NewContext(ctx, rc.red) // and so what is logged of the call
		}
	}
	for _, t := range tools {
		for name, d := range toolDeclarations(t) {
			if rc.decl == nil {
				rc.decl = map[string]*redact.Declared{}
			}
			rc.decl[name] = d
		}
	}
	return context.WithValue(ctx, recorderKey{}, rc)
}

// recorderOf is the call's recorder; without one (a path that set none),
// the installation's redactor and no declarations.
func (g *Gateway) recorderOf(ctx context.Context) *recorder {
	if rc, ok := ctx.Value(recorderKey{}).(*recorder); ok {
		return rc
	}
	return &recorder{g: g, red: g.redactor}
}

// toolDeclarations reads the x-warden-personal marks of a request's
// tools, by function name: chat's {"type":"function","function":{"name",
// "parameters"}}, the Responses API's {"type":"function","name",
// "parameters"}.
func toolDeclarations(tools json.RawMessage) map[string]*redact.Declared {
	if !bytes.Contains(tools, []byte(redact.PersonalKeyword)) {
		return nil
	}
	var ts []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
		Function   struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if json.Unmarshal(tools, &ts) != nil {
		return nil
	}
	out := map[string]*redact.Declared{}
	for _, t := range ts {
		name, params := t.Function.Name, t.Function.Parameters
		if name == "" {
			name, params = t.Name, t.Parameters
		}
		if d, _ := redact.DeclaredIn(params); d != nil && name != "" {
			out[name] = d
		}
	}
	return out
}

// declared is what the function named name declares personal.
func (rc *recorder) declared(ctx context.Context, name string) *redact.Declared {
	if d := rc.decl[name]; d != nil {
		return d
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if d, ok := rc.catalog[name]; ok {
		return d
	}
	var d *redact.Declared
	if t, err := catalog.Get(ctx, rc.g.db.Read(), name); err == nil {
		d = t.Personal()
	}
	if rc.catalog == nil {
		rc.catalog = map[string]*redact.Declared{}
	}
	rc.catalog[name] = d
	return d
}

// storedJSON is what is kept of a prompt's messages, a completion's
// message or a response's items: cut to maxStored first, then redacted.
// The redactor reads no more than is stored, however large the request
// (a 4 MiB prompt costs the redactor what 8 KiB does).
func (rc *recorder) storedJSON(ctx context.Context, raw []byte) string {
	if rc.red == nil || len(raw) == 0 {
		return ""
	}
	out, err := rc.red.JSON(rc.declare(ctx, clipJSON(raw, maxStored)))
	if err != nil {
		return ""
	}
	// A token may be longer than the value it replaced.
	return string(clipJSON(out, maxStored))
}

// text is what is kept of a stream's text (kept to maxStored bytes and
// one more, to show it was cut).
func (rc *recorder) text(s string) string {
	if rc.red == nil || s == "" {
		return ""
	}
	return truncate(rc.red.String(s[:min(len(s), maxStored+1)]))
}

// declare returns doc with the declared fields of every tool call's
// arguments in it tokenised (the rest is left to JSON): a chat message's
// tool_calls[].function and function_call, a Responses function_call
// item. doc comes back as it is when it holds no tool call.
func (rc *recorder) declare(ctx context.Context, doc []byte) []byte {
	if !bytes.Contains(doc, []byte(`"arguments"`)) {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return doc
	}
	changed := false
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 16 {
			return
		}
		switch t := v.(type) {
		case []any:
			for _, c := range t {
				walk(c, depth+1)
			}
		case map[string]any:
			name, _ := t["name"].(string)
			if args, ok := t["arguments"].(string); ok && name != "" {
				if d := rc.declared(ctx, name); d != nil {
					t["arguments"] = string(rc.red.Declare([]byte(args), d))
					changed = true
				}
			}
			for _, c := range t {
				walk(c, depth+1)
			}
		}
	}
	walk(v, 0)
	if !changed {
		return doc
	}
	out, err := json.Marshal(v)
	if err != nil {
		return doc
	}
	return out
}

// streamedCalls puts a stream's tool calls together from their deltas
// (a call's name in one, its arguments in pieces across many), so that
// the record reads each call's arguments whole, as JSON: an identity
// number cut across two deltas is one value again.
type streamedCalls struct {
	calls []*streamedCall
	size  int
}

type streamedCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

// add reads one delta's tool_calls.
func (s *streamedCalls) add(raw json.RawMessage) {
	var ds []struct {
		Index    int    `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &ds) != nil {
		return
	}
	for _, d := range ds {
		var c *streamedCall
		for _, x := range s.calls {
			if x.index == d.Index {
				c = x
			}
		}
		if c == nil {
			if len(s.calls) >= 128 {
				continue
			}
			c = &streamedCall{index: d.Index}
			s.calls = append(s.calls, c)
		}
		if d.ID != "" {
			c.id = d.ID
		}
		c.name += d.Function.Name
		if s.size+len(d.Function.Arguments) <= maxStored {
			c.args.WriteString(d.Function.Arguments)
			s.size += len(d.Function.Arguments)
		}
	}
}

// record is what the call's record keeps of a stream that wrote text and
// the calls: the text alone as redacted text when no tool was called,
// otherwise the assistant's message (content and tool_calls) redacted
// as a completion's message is.
func (s *streamedCalls) record(ctx context.Context, rc *recorder, text string) string {
	if len(s.calls) == 0 {
		return rc.text(text)
	}
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id,omitempty"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := struct {
		Role      string  `json:"role"`
		Content   *string `json:"content"`
		ToolCalls []call  `json:"tool_calls"`
	}{Role: "assistant"}
	if text != "" {
		msg.Content = &text
	}
	for _, c := range s.calls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: c.id, Type: "function", Function: fn{Name: c.name, Arguments: c.args.String()}})
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return ""
	}
	return rc.storedJSON(ctx, raw)
}
