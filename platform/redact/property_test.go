package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// fragments are pieces of realistic text: values to find, near misses and
// the punctuation between them, so that random joins make new neighbours.
var fragments = []string{
	"jane.doe+vip@example.com", "4111 1111 1111 1111", "4111111111111112", "DE89 3704 0044 0532 0130 00",
	"+44 20 7946 0958", "(415) 555-0132", "06 12 34 56 78", "123-45-6789", "000-12-3456", "AB123456C",
	"10.0.0.1", "2001:db8::1", "::1", "wk_Z3kP9qL2mX8vR4tY6wB1nC5d", "Bearer ", "Basic dXNlcjpwYXNz",
	"password=", "\"api_key\": \"", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "ORD-2024-00917",
	"$2,400.00", "2026-11-30", "14:32:05", "v1.2.3", "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
	"[card:1a2b3c4d]", "[email:", "]", "[", "@", "+", "(", ")", "-", ".", "/", ":", "=", "\"", "'",
	"\\n", "\\u003c", " ", "  ", "\n", ",", ";", "0", "1", "9", "a", "Z", "_", "電話", "é", "tel ",
	"-----BEGIN PRIVATE KEY-----", "postgres://u:p@h", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY",
}

func textGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		parts := rapid.SliceOfN(rapid.OneOf(
			rapid.SampledFrom(fragments),
			rapid.StringN(0, 6, -1),
		), 0, 24).Draw(t, "parts")
		return strings.Join(parts, "")
	})
}

func TestPropertyIdempotent(t *testing.T) {
	r := New(testKey)
	rapid.Check(t, func(t *rapid.T) {
		in := textGen().Draw(t, "in")
		once := r.String(in)
		if twice := r.String(once); twice != once {
			t.Fatalf("String(String(%q)) = %q, want %q", in, twice, once)
		}
	})
}

func TestPropertyBoundedGrowth(t *testing.T) {
	r := New(testKey)
	rapid.Check(t, func(t *rapid.T) {
		in := textGen().Draw(t, "in")
		if out := r.String(in); len(out) > maxGrowth*len(in)+growthSlack {
			t.Fatalf("String(%q) = %q: %d bytes from %d, want at most %d", in, out, len(out), len(in), maxGrowth*len(in)+growthSlack)
		}
	})
}

func TestPropertyJSONStaysValid(t *testing.T) {
	r := New(testKey)
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfN(rapid.SampledFrom([]string{"email", "note", "cardNumber", "password", "items", "amount"}), 1, 6).Draw(t, "keys")
		var b strings.Builder
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + k + `":`)
			b.WriteString(rapid.SampledFrom([]string{`"` + strings.ReplaceAll(textGen().Draw(t, "v"), `\`, `/`) + `"`, `12`, `4111111111111111`, `true`, `null`, `["a@b.example", 1]`, `{"ssn":"123-45-6789"}`}).Draw(t, "value"))
		}
		b.WriteString("}")
		in := b.String()
		if !jsonValid(in) {
			return // the drawn text broke the quoting: not this property's concern
		}
		out, err := r.JSON([]byte(in))
		if err != nil || !jsonValid(string(out)) {
			t.Fatalf("JSON(%s) = %s, %v, want valid JSON", in, out, err)
		}
		again, err := r.JSON(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("JSON(%s) = %s, %v, want it unchanged", out, again, err)
		}
	})
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
