package redact_test

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/redact"
)

func TestDeclaredFieldsAreTokenisedWhatever(t *testing.T) {
	r := redact.New([]byte("0123456789abcdef0123456789abcdef"))
	schema := []byte(`{
		"type": "object",
		"properties": {
			"customer": {"type": "object", "properties": {
				"full_name": {"type": "string", "x-warden-personal": "name"},
				"code": {"$ref": "#/$defs/code"}
			}},
			"lines": {"type": "array", "items": {"type": "object", "properties": {
				"owner": {"type": "string", "x-warden-personal": "name"},
				"sku": {"type": "string"}
			}}},
			"born": {"type": "string", "x-warden-personal": "date_of_birth"},
			"tags": {"type": "object", "properties": {"plain": {"type": "string"}}, "additionalProperties": {"x-warden-personal": "id"}},
			"note": {"type": "string"}
		},
		"$defs": {"code": {"type": "string", "x-warden-personal": "id"}}
	}`)
	d, err := redact.DeclaredIn(schema)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, m := range d.Marks() {
		paths = append(paths, m.Path+"="+m.Kind)
	}
	if got, want := strings.Join(paths, " "), "born=date_of_birth customer.code=id customer.full_name=name lines[].owner=name tags.*=id"; got != want {
		t.Fatalf("marks %q, want %q", got, want)
	}
	doc := `{"customer":{"full_name":"Zyx Qwerty","code":"CUST-77Q"},"lines":[{"owner":"Zyx Qwerty","sku":"SKU-1"}],` +
		`"born":"1 Jan","tags":{"plain":"kept","other":"K-991"},"note":"see CUST-77Q"}`
	out, err := r.JSONDeclared([]byte(doc), d)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	name := r.Token("name", "zyx qwerty")
	for _, gone := range []string{`"Zyx Qwerty"`, `"CUST-77Q"`, "1 Jan", "K-991"} {
		if strings.Contains(s, gone) {
			t.Errorf("%s in the clear: %s", gone, s)
		}
	}
	for _, kept := range []string{`"sku":"SKU-1"`, `"plain":"kept"`, `"full_name":"` + name + `"`, `"owner":"` + name + `"`,
		`"code":"` + r.Token("id", "CUST-77Q") + `"`, `"born":"` + r.Token("dob", "1 Jan") + `"`} {
		if !strings.Contains(s, kept) {
			t.Errorf("want %s in %s", kept, s)
		}
	}
	// The free-text note is left to detection, which does not know the code.
	if !strings.Contains(s, `"note":"see CUST-77Q"`) {
		t.Errorf("undeclared note changed: %s", s)
	}
	// Without the declaration, detection alone misses the made-up name.
	plain, _ := r.JSON([]byte(doc))
	if !strings.Contains(string(plain), `"full_name":"Zyx Qwerty"`) && !strings.Contains(string(plain), "CUST-77Q") {
		t.Logf("detection caught the values too: %s", plain)
	}
	if got := r.JSONTextDeclared([]byte(doc), nil); got != string(plain) {
		t.Errorf("nil declaration differs from JSON: %s", got)
	}
}

func TestDeclaredBadMarks(t *testing.T) {
	d, err := redact.DeclaredIn([]byte(`{"properties":{"who":{"x-warden-personal":"nom"},"n":{"x-warden-personal":3}}}`))
	if err == nil || !strings.Contains(err.Error(), `who is marked "nom"`) || !strings.Contains(err.Error(), `n is marked 3`) ||
		!strings.Contains(err.Error(), "date_of_birth") {
		t.Fatalf("err = %v", err)
	}
	r := redact.New([]byte("k"))
	out, _ := r.JSONDeclared([]byte(`{"who":"Zyx Qwerty"}`), d)
	if strings.Contains(string(out), "Zyx") || !strings.Contains(string(out), "[personal:") {
		t.Fatalf("a bad mark still tokenises: %s", out)
	}
	if d, err := redact.DeclaredIn([]byte(`{"properties":{"a":{"type":"string"}}}`)); d != nil || err != nil {
		t.Fatalf("unmarked schema: %v %v", d, err)
	}
	// A self-referencing schema is read in bounded time.
	if _, err := redact.DeclaredIn([]byte(`{"properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"x-warden-personal":"name"}}}`)); err != nil {
		t.Fatal(err)
	}
}

func TestKeepingATenantsTerms(t *testing.T) {
	r := redact.New([]byte("0123456789abcdef0123456789abcdef"))
	text := "Ship 3 Zorbel Quandt jackets to hub; refund to zorbel.quandt@example.com, card 4111 1111 1111 1111. I spoke to Octavia Abubakar."
	k := r.Keeping([]string{"Zorbel Quandt", "zorbel.quandt@example.com", "4111 1111 1111 1111"})
	got := k.String(text)
	if !strings.Contains(got, "Ship 3 Zorbel Quandt jackets") {
		t.Errorf("allow-listed term redacted: %s", got)
	}
	for _, v := range []string{"zorbel.quandt@example.com", "4111"} {
		if strings.Contains(got, v) {
			t.Errorf("an allow-list un-redacted a structured value %q: %s", v, got)
		}
	}
	if plain := r.String(text); strings.Contains(plain, "Zorbel Quandt jackets") {
		t.Errorf("detection leaves the term without the list too (the test is vacuous): %s", plain)
	}
	if r.Keeping(nil) != r {
		t.Error("no terms: not the same redactor")
	}
}
