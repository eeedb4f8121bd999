package redact

import (
	"strings"
	"testing"
)

// TestNERNameAtEnd: a name the model finds is found at the end of a text
// or line too, where nothing follows it (prose closes an entity only at
// the token after it).
func TestNERNameAtEnd(t *testing.T) {
	r := New(testKey)
	for _, s := range []string{
		"I spoke to Bartholomew Quigley",
		"Escalated by Bartholomew Quigley\nstatus=open",
		"I spoke to Bartholomew Quigley today",
	} {
		if out := r.String(s); strings.Contains(out, "Quigley") {
			t.Errorf("String(%q) = %q, want the name redacted", s, out)
		}
	}
}

// TestNERBound: hostile text with thousands of undecided capitalised
// pairs asks the model at most maxNER times a pass, and real text, with
// a few such runs in a long text, never reaches the bound.
func TestNERBound(t *testing.T) {
	r := New(testKey)
	hostile := strings.Repeat("Aaaaaaaaaa Bbbbbbbbbb, ", 4000)
	before := nerCalls.Load()
	r.String(hostile)
	if n := nerCalls.Load() - before; n > int64(maxPasses*maxNER(len(hostile))) {
		t.Errorf("%d model calls for %d bytes, want at most %d", n, len(hostile), maxPasses*maxNER(len(hostile)))
	}
	long := strings.Repeat(cleanLines[0]+"\n", 100) + "I spoke to Bartholomew Quigley today\n" + strings.Repeat(cleanLines[2]+"\n", 100)
	if out := r.String(long); strings.Contains(out, "Quigley") {
		t.Errorf("a name in a long text survived")
	}
}
