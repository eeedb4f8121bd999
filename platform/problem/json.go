package problem

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// JSONReason says why encoding/json could not decode a body, in the
// sender's terms — the member and the rule it breaks (`"max_tokens" must
// be a whole number`), `it is not valid JSON`, `"x" is not a known
// member` — and never in encoding/json's, which names Go types and
// struct fields. Every door's 400 for a body of the wrong shape says it
// this way.
func JSONReason(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return "the body " + JSONTypeRule(te.Type)
	case errors.As(err, &te) && tooLarge(te):
		return QuoteMember(te.Field) + " is too large"
	case errors.As(err, &te):
		return QuoteMember(te.Field) + " " + JSONTypeRule(te.Type)
	case errors.As(err, &se), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "it is not valid JSON"
	}
	if name, ok := UnknownJSONMember(err); ok {
		return QuoteMember(name) + " is not a known member"
	}
	return "it could not be read"
}

// tooLarge tells a whole number too large for its member's type from a
// value of another type.
func tooLarge(te *json.UnmarshalTypeError) bool {
	n, ok := strings.CutPrefix(te.Value, "number ")
	return ok && te.Field != "" && JSONTypeRule(te.Type) == "must be a whole number" && !strings.ContainsAny(n, ".eE")
}

// UnknownJSONMember is the member a decoder with DisallowUnknownFields
// refused (encoding/json has no error type for it, only its text).
func UnknownJSONMember(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	name, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(name)
	return name, uerr == nil
}

// JSONTypeRule is the rule a value decoded into type t must follow, in
// JSON's terms ("must be a whole number", "must be an object").
func JSONTypeRule(t reflect.Type) string {
	if t == nil {
		return "has the wrong type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "must be a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "must be a whole number"
	case reflect.Float32, reflect.Float64:
		return "must be a number"
	case reflect.Bool:
		return "must be true or false"
	case reflect.Struct, reflect.Map:
		return "must be an object"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	}
	return "has the wrong type"
}

// QuoteMember quotes a member name the sender wrote, cut to 64 bytes.
func QuoteMember(name string) string {
	if len(name) > 64 {
		name = strings.ToValidUTF8(name[:64], "") + "…"
	}
	return strconv.Quote(name)
}
