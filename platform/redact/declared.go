package redact

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// PersonalKeyword is the JSON Schema keyword that marks a field personal:
// "x-warden-personal": "name". A field so marked is tokenised whole with
// the kind it names, whatever detection would say of its value: detection
// is the net for free text, not the only line of defence.
const PersonalKeyword = "x-warden-personal"

// personalKinds maps the kinds a mark may name to the token kind written,
// the one detection writes for that kind of value, so one value gets one
// token whether it was declared or detected.
var personalKinds = map[string]string{
	"name":          KindName,
	"address":       KindAddress,
	"email":         KindEmail,
	"phone":         KindPhone,
	"id":            KindID,
	"date_of_birth": KindDOB,
	"dob":           KindDOB,
	"card":          KindCard,
	"iban":          KindIBAN,
	"account":       KindAccount,
	"ssn":           KindSSN,
	"nino":          KindNINO,
	"ip":            KindIP,
	"secret":        KindSecret,
}

// KindPersonal is the token kind of a field marked with a kind Warden does
// not know: refused where the schema is saved (the catalog), tokenised all
// the same where it cannot be refused (a schema an MCP server announces).
const KindPersonal = "personal"

// PersonalKinds lists the kinds a mark may name, sorted.
func PersonalKinds() []string {
	out := make([]string, 0, len(personalKinds))
	for k := range personalKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Declared is what a JSON schema declares personal: a tree of the fields
// marked with PersonalKeyword, by property, array element and other
// member. The nil *Declared declares nothing, and its methods accept it.
type Declared struct {
	kind  string               // the token kind of this value, "" when not marked
	props map[string]*Declared // named properties that are, or hold, marked fields
	each  *Declared            // every array element, and every member not in props
	paths []Mark               // the marks, for people (Marks); on the root only
}

// A Mark is one field a schema marks personal: its path ("customer.name",
// "lines[].owner", "notes.*" for every member) and the kind it names.
type Mark struct {
	Path string
	Kind string
}

func (d *Declared) kindOf() string {
	if d == nil {
		return ""
	}
	return d.kind
}

func (d *Declared) member(key string) *Declared {
	if d == nil {
		return nil
	}
	if p, ok := d.props[key]; ok {
		return p
	}
	return d.each
}

func (d *Declared) element() *Declared {
	if d == nil {
		return nil
	}
	return d.each
}

// Marks lists the fields d declares personal, in path order.
func (d *Declared) Marks() []Mark {
	if d == nil {
		return nil
	}
	return d.paths
}

// Kind is the token kind d declares for the field at path (the syntax of
// Mark.Path), "" when none: what a page needs to treat a top-level
// argument (a tool's target) as personal.
func (d *Declared) Kind(path string) string {
	for _, m := range d.Marks() {
		if m.Path == path {
			return personalKinds[m.Kind]
		}
	}
	return ""
}

// maxSchemaDepth bounds how deep DeclaredIn reads a schema and how many
// local references it follows along one path.
const maxSchemaDepth = 32

// DeclaredIn reads the fields a JSON schema marks personal with
// PersonalKeyword: under properties, items, prefixItems,
// additionalProperties and patternProperties, through allOf, anyOf and
// oneOf, and local references ("#/$defs/customer"). It returns nil when
// the schema marks nothing (or is empty).
//
// A mark that is not one of PersonalKinds is an error naming its path;
// the Declared returned with it still tokenises that field (as
// KindPersonal), for callers that cannot refuse the schema.
func DeclaredIn(schema []byte) (*Declared, error) {
	if len(schema) == 0 || !strings.Contains(string(schema), PersonalKeyword) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, nil // not a schema: whoever validates schemas says so
	}
	w := &schemaWalk{root: root}
	d := w.walk(root, "", 0)
	var err error
	if len(w.bad) > 0 {
		err = fmt.Errorf("%s; %s names one of %s", strings.Join(w.bad, "; "), PersonalKeyword, strings.Join(PersonalKinds(), ", "))
	}
	if d == nil {
		return nil, err
	}
	sort.Slice(w.marks, func(i, j int) bool { return w.marks[i].Path < w.marks[j].Path })
	d.paths = w.marks
	return d, err
}

type schemaWalk struct {
	root  any
	marks []Mark
	bad   []string
	seen  map[string]bool // marks already listed, by path
	nodes int             // schema objects read, bounded by maxSchemaNodes
}

// maxSchemaNodes bounds the work of reading one schema (references can
// make a small schema a large tree).
const maxSchemaNodes = 10000

func (w *schemaWalk) walk(node any, path string, depth int) *Declared {
	m, ok := node.(map[string]any)
	if !ok || depth > maxSchemaDepth || w.nodes >= maxSchemaNodes {
		return nil
	}
	w.nodes++
	var d *Declared
	get := func() *Declared {
		if d == nil {
			d = &Declared{}
		}
		return d
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		if target := w.resolve(ref); target != nil {
			d = merge(d, w.walk(target, path, depth+1))
		}
	}
	if v, ok := m[PersonalKeyword]; ok {
		name, _ := v.(string)
		shown := path
		if shown == "" {
			shown = "(the whole document)"
		}
		kind, known := personalKinds[name]
		if !known {
			kind = KindPersonal
			w.bad = append(w.bad, fmt.Sprintf("%s is marked %s", shown, jsonQuote(v)))
		} else {
			w.mark(path, name)
		}
		get().kind = kind
	}
	props, _ := m["properties"].(map[string]any)
	if props != nil {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if c := w.walk(props[k], join(path, k), depth+1); c != nil {
				dd := get()
				if dd.props == nil {
					dd.props = map[string]*Declared{}
				}
				dd.props[k] = merge(dd.props[k], c)
			}
		}
	}
	each := func(c *Declared) {
		if c != nil {
			get().each = merge(get().each, c)
		}
	}
	switch it := m["items"].(type) {
	case map[string]any:
		each(w.walk(it, path+"[]", depth+1))
	case []any:
		for _, s := range it {
			each(w.walk(s, path+"[]", depth+1))
		}
	}
	if pi, ok := m["prefixItems"].([]any); ok {
		for _, s := range pi {
			each(w.walk(s, path+"[]", depth+1))
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		each(w.walk(ap, join(path, "*"), depth+1))
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, s := range pp {
			each(w.walk(s, join(path, "*"), depth+1))
		}
	}
	if d != nil && d.each != nil && len(props) > 0 {
		// Members named under properties are not "other" members: an
		// unmarked one is not covered by additionalProperties' mark.
		if d.props == nil {
			d.props = map[string]*Declared{}
		}
		for k := range props {
			if _, ok := d.props[k]; !ok {
				d.props[k] = nil
			}
		}
	}
	for _, comb := range []string{"allOf", "anyOf", "oneOf"} {
		if subs, ok := m[comb].([]any); ok {
			for _, s := range subs {
				d = merge(d, w.walk(s, path, depth+1))
			}
		}
	}
	return d
}

func (w *schemaWalk) mark(path, kind string) {
	if path == "" {
		path = "(the whole document)"
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if !w.seen[path] {
		w.seen[path] = true
		w.marks = append(w.marks, Mark{Path: path, Kind: kind})
	}
}

// resolve follows a local JSON pointer ("#/$defs/customer").
func (w *schemaWalk) resolve(ref string) any {
	node := w.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[part]
	}
	return node
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func jsonQuote(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// merge is the union of two declarations: a field either marks is
// marked (the first kind wins).
func merge(a, b *Declared) *Declared {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := &Declared{kind: a.kind, each: merge(a.each, b.each)}
	if out.kind == "" {
		out.kind = b.kind
	}
	if len(a.props)+len(b.props) > 0 {
		out.props = map[string]*Declared{}
		for k, v := range a.props {
			out.props[k] = v
		}
		for k, v := range b.props {
			out.props[k] = merge(out.props[k], v)
		}
	}
	return out
}

// Declare returns doc with only the fields d declares personal replaced by
// their tokens, everything else as it was: the arguments Warden writes an
// approver's sentence from ("Refund $12 for order ORD-1"), where the
// sentence's own rules mask what else needs masking. Members keep their
// order; a document that is not JSON, or a nil d, comes back as it is.
// Values r was told are personal (Marking) are tokenised too, wherever
// they are in the document.
func (r *Redactor) Declare(doc []byte, d *Declared) []byte {
	if d == nil && r.marked == nil || len(doc) == 0 {
		return doc
	}
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return doc
	}
	out, err := json.Marshal(r.declare(v, d))
	if err != nil {
		return doc
	}
	return out
}

func (r *Redactor) declare(v any, d *Declared) any {
	if d == nil && r.marked == nil {
		return v
	}
	if k := d.kindOf(); k != "" {
		return r.tokenAll(v, k)
	}
	switch t := v.(type) {
	case string:
		return r.marked.replace(t)
	case json.Number:
		if m := r.marked.replace(string(t)); m != string(t) {
			return m
		}
	case map[string]any:
		for k, c := range t {
			t[k] = r.declare(c, d.member(k))
		}
	case []any:
		for i, c := range t {
			t[i] = r.declare(c, d.element())
		}
	}
	return v
}

// tokenAll replaces every string and number in v by a token of kind, as
// JSON does under a sensitive name.
func (r *Redactor) tokenAll(v any, kind string) any {
	switch t := v.(type) {
	case string:
		if t == "" || isToken(t) {
			return t
		}
		return r.Token(kind, t)
	case json.Number:
		return r.Token(kind, string(t))
	case map[string]any:
		for k, c := range t {
			t[k] = r.tokenAll(c, kind)
		}
	case []any:
		for i, c := range t {
			t[i] = r.tokenAll(c, kind)
		}
	}
	return v
}
