package redact

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// maxDepth bounds how deep Value walks, which also stops cycles.
const maxDepth = 32

// Value returns a redacted copy of v, made of generic values that encode
// to JSON as v would: structs (exported fields, by their JSON names, with
// embedded structs promoted, "-" and omitempty honoured) and maps become
// map[string]any, slices and arrays []any. Strings are redacted as free text
// (or as JSON when they hold a document), and fields, map keys and nested values under names that mean
// secret or personal data are replaced whole. Types that marshal
// themselves (json.Marshaler, encoding.TextMarshaler) are redacted in
// their marshalled form; errors and byte slices become their redacted
// text. Booleans and numbers are kept, except numbers under a sensitive
// name or long enough to be a card or phone number. Values nested deeper
// than 32 levels (cycles), functions and channels become placeholders.
// v itself is not changed.
//
// A map[string]any argument gives a map[string]any result.
func (r *Redactor) Value(v any) any {
	return r.value(reflect.ValueOf(v), "", 0)
}

var (
	errorType         = reflect.TypeFor[error]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

func (r *Redactor) value(v reflect.Value, kind string, depth int) any {
	if !v.IsValid() {
		return nil
	}
	if depth > maxDepth {
		return "[too deep]"
	}
	t := v.Type()
	if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
		return nil
	}
	if v.CanInterface() {
		switch {
		case t.Implements(errorType):
			return r.leaf(kind, v.Interface().(error).Error())
		case t.Implements(jsonMarshalerType):
			b, err := v.Interface().(json.Marshaler).MarshalJSON()
			if err != nil {
				return r.leaf(kind, fmt.Sprintf("%T", v.Interface()))
			}
			return r.jsonAny(b, kind)
		case t.Implements(textMarshalerType):
			b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return r.leaf(kind, fmt.Sprintf("%T", v.Interface()))
			}
			return r.leaf(kind, string(b))
		}
	}
	if t == numberType {
		return r.numeric(kind, v.String(), v)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		return r.value(v.Elem(), kind, depth+1)
	case reflect.String:
		return r.leaf(kind, v.String())
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return r.numeric(kind, strconv.FormatInt(v.Int(), 10), v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return r.numeric(kind, strconv.FormatUint(v.Uint(), 10), v)
	case reflect.Float32, reflect.Float64:
		return r.numeric(kind, strconv.FormatFloat(v.Float(), 'f', -1, 64), v)
	case reflect.Complex64, reflect.Complex128:
		return r.leaf(kind, fmt.Sprint(v.Complex()))
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return r.leaf(kind, strings.ToValidUTF8(string(v.Bytes()), "\uFFFD"))
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = r.value(v.Index(i), kind, depth+1)
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			key := mapKey(it.Key())
			k := kind
			if fk := r.fieldKind(key); fk != "" {
				k = fk
			}
			out[r.String(key)] = r.value(it.Value(), k, depth+1)
		}
		return out
	case reflect.Struct:
		out := make(map[string]any, t.NumField())
		r.structFields(v, kind, depth, out)
		return out
	}
	return "[" + t.Kind().String() + "]" // func, chan, unsafe pointer
}

// structFields adds v's exported fields to out under their JSON names,
// promoting the fields of embedded structs as encoding/json does.
func (r *Redactor) structFields(v reflect.Value, kind string, depth int, out map[string]any) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, omitempty, skip := jsonName(f)
		if skip {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				ft, fv = ft.Elem(), fv.Elem()
			}
			if ft.Kind() == reflect.Struct {
				r.structFields(fv, kind, depth, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if omitempty && fv.IsZero() {
			continue
		}
		k := kind
		if fk := r.fieldKind(name); fk != "" {
			k = fk
		} else if fk := r.fieldKind(f.Name); fk != "" {
			k = fk
		}
		out[name] = r.value(fv, k, depth+1)
	}
}

// jsonName returns the name encoding/json gives field f.
func jsonName(f reflect.StructField) (name string, omitempty, skip bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == "omitempty" || o == "omitzero" {
			omitempty = true
		}
	}
	return name, omitempty, false
}

func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	if k.CanInterface() {
		if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
			if b, err := tm.MarshalText(); err == nil {
				return string(b)
			}
		}
	}
	return fmt.Sprint(k.Interface())
}

// numeric keeps a number unless it is under a sensitive name or its
// digits are something to redact.
func (r *Redactor) numeric(kind, s string, v reflect.Value) any {
	if kind != "" {
		return r.Token(kind, s)
	}
	if red := r.number(s, nil); red != s {
		return red
	}
	return v.Interface()
}

// jsonAny redacts JSON a value marshalled itself to and decodes it into
// generic values.
func (r *Redactor) jsonAny(b []byte, kind string) any {
	budget := MaxText
	red, err := r.json(b, kind, &budget, nil)
	if err != nil {
		return r.leaf(kind, strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	dec := json.NewDecoder(bytes.NewReader(red))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return r.leaf(kind, string(red))
	}
	return out
}
