package redact

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestMarking(t *testing.T) {
	base := New([]byte("k"))
	r := base.Marking([]Marked{{Kind: "name", Value: "Zyx Qwerty"}, {Kind: "id", Value: "KQ-4471-ZZ"}, {Kind: "id", Value: "4471"},
		{Kind: "name", Value: "x"}, {Kind: "nom", Value: "Blorp"}})
	name, code, num, other := base.Token("name", "Zyx Qwerty"), base.Token("id", "KQ-4471-ZZ"), base.Token("id", "4471"), base.Token(KindPersonal, "Blorp")
	for _, tc := range []struct{ in, want string }{
		{"ship to Zyx Qwerty today", "ship to " + name + " today"},
		{"ship to zyx   QWERTY, ref KQ-4471-ZZ", "ship to " + name + ", ref " + code},
		{"code 4471 and SKU-44712 and A4471", "code " + num + " and SKU-44712 and A4471"},
		{"zyx qwertyuiop stays", "zyx qwertyuiop stays"},
		{"x marks nothing; Blorp is declared", "x marks nothing; " + other + " is declared"},
		{"already " + name, "already " + name},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := r.String(r.String(tc.in)); got != r.String(tc.in) {
			t.Errorf("String(%q) is not idempotent: %q", tc.in, got)
		}
	}
	// JSON strings, numbers and keys; Declare for the headline; detection still runs.
	out, err := r.JSON([]byte(`{"who":"Zyx Qwerty","n":4471,"Zyx Qwerty":1,"mail":"jane@example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); strings.Contains(s, "Qwerty") || strings.Contains(s, ":4471") || strings.Contains(s, "jane@") || !strings.Contains(s, name) || !strings.Contains(s, num) {
		t.Errorf("JSON = %s", s)
	}
	if s := string(r.Declare([]byte(`{"who":"for Zyx Qwerty","n":4471,"sku":"SKU-1"}`), nil)); s != `{"n":"`+num+`","sku":"SKU-1","who":"for `+name+`"}` {
		t.Errorf("Declare = %s", s)
	}
	// Marking again adds; the allow-list never keeps a marked value.
	r2 := r.Marking([]Marked{{Kind: "email", Value: "Hugo Boss"}}).Keeping([]string{"Zyx Qwerty"})
	if got := r2.String("Hugo Boss for Zyx Qwerty"); got != base.Token("email", "Hugo Boss")+" for "+name {
		t.Errorf("marked twice, kept = %q", got)
	}
	// The base redactor is untouched.
	if got := base.String("ref KQ-4471-ZZ"); got != "ref KQ-4471-ZZ" {
		t.Errorf("base = %q", got)
	}
	if base.Marking(nil) != base || base.Marking([]Marked{{Kind: "name", Value: " "}}) != base {
		t.Error("no values: not r itself")
	}
}

// A record logged with a context carrying a redactor (NewContext) is
// redacted by it: a tenant's allow-list and a journey's declared values
// apply to the log as to what is stored.
func TestHandlerUsesTheContextsRedactor(t *testing.T) {
	base := New([]byte("k"))
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), base))
	tenant := base.Keeping([]string{"Zorbel Quandt"}).Marking([]Marked{{Kind: "id", Value: "KQ-4471-ZZ"}})
	const msg = "Ship 3 Zorbel Quandt jackets, ref KQ-4471-ZZ"
	log.InfoContext(context.Background(), msg, "note", msg)
	plain := buf.String()
	buf.Reset()
	log.InfoContext(NewContext(context.Background(), tenant), msg, "note", msg)
	kept := buf.String()
	if strings.Contains(plain, "Zorbel Quandt") || !strings.Contains(plain, "KQ-4471-ZZ") {
		t.Errorf("without the context: %s", plain)
	}
	if strings.Count(kept, "Zorbel Quandt") != 2 || strings.Contains(kept, "KQ-4471-ZZ") || !strings.Contains(kept, base.Token("id", "KQ-4471-ZZ")) {
		t.Errorf("with the tenant's redactor: %s", kept)
	}
}
