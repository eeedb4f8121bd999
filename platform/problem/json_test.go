package problem

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONReasonSpeaksTheSendersTerms: a body of the wrong shape is
// explained by the member and its rule, never by Go's types or struct
// fields.
func TestJSONReasonSpeaksTheSendersTerms(t *testing.T) {
	type inner struct {
		Amount int64 `json:"amount"`
	}
	type body struct {
		Input   string            `json:"input"`
		Max     *int64            `json:"max_tokens"`
		Temp    float64           `json:"temperature"`
		Stream  bool              `json:"stream"`
		Meta    map[string]string `json:"metadata"`
		Items   []string          `json:"items"`
		Nested  inner             `json:"nested"`
		Pointer *inner            `json:"pointer"`
	}
	for _, tc := range []struct{ in, want string }{
		{`{"input": 5}`, `"input" must be a string`},
		{`{"max_tokens": "12"}`, `"max_tokens" must be a whole number`},
		{`{"max_tokens": 1.5}`, `"max_tokens" must be a whole number`},
		{`{"max_tokens": 99999999999999999999}`, `"max_tokens" is too large`},
		{`{"temperature": "hot"}`, `"temperature" must be a number`},
		{`{"stream": "yes"}`, `"stream" must be true or false`},
		{`{"metadata": [1]}`, `"metadata" must be an object`},
		{`{"items": "x"}`, `"items" must be an array`},
		{`{"nested": {"amount": "1"}}`, `"nested.amount" must be a whole number`},
		{`{"pointer": {"amount": true}}`, `"pointer.amount" must be a whole number`},
		{`[1]`, `the body must be an object`},
		{`{"input": `, `it is not valid JSON`},
		{`{"input": "x",}`, `it is not valid JSON`},
		{``, `it is not valid JSON`},
		{`{"other": 1}`, `"other" is not a known member`},
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(tc.in)))
		dec.DisallowUnknownFields()
		var b body
		err := dec.Decode(&b)
		if err == nil {
			t.Fatalf("%s: decoded", tc.in)
		}
		got := JSONReason(err)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.in, got, tc.want)
		}
		for _, leak := range []string{"Go", "struct", "int64", "unmarshal", "body.", "inner"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: %q names %q", tc.in, got, leak)
			}
		}
	}
	long := strings.Repeat("m", 100)
	if got := QuoteMember(long); len(got) > 64+2+len("…") {
		t.Errorf("QuoteMember kept %d bytes", len(got))
	}
}
