package ner

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jdkato/prose/v2"
)

// texts returns corpus lines and windows of three to six words of them,
// the shape of text the redactor asks about.
func texts(t *testing.T) []string {
	f, err := os.Open("../../testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, e.Text)
	}
	rng := rand.New(rand.NewPCG(15, 15))
	var out []string
	for i, l := range lines {
		if i%4 == 0 {
			out = append(out, l)
		}
		fs := strings.Fields(l)
		for range 3 {
			if len(fs) < 3 {
				break
			}
			n := 3 + rng.IntN(4)
			a := rng.IntN(len(fs))
			out = append(out, strings.Join(fs[a:min(len(fs), a+n)], " "))
		}
	}
	out = append(out, handTexts...)
	return out
}

// handTexts are the tokenizer's and tagger's special cases.
var handTexts = []string{
	"Anna Smith said Anna Smith", "I met Bartholomew Quigley yesterday", "Mr. Quigley's order",
	"Dr. O'Neil-Smith, U.S. office", "Jean-Luc Picard met Kwame Mensah in Accra.", "Call Ms Zhang Wei now",
	"( Anna ) [Smith] \"Bob\" don't they'll *-12 *ABC*-3 0 -NNP- :-) x@y.com www.example.com $5",
	"“Maria van der Berg” paid", "\tTabs\tand  double  spaces  Hans Müller\u00a0wrote",
}

var handWritten = len(handTexts)

func proseWords(t *testing.T, m *prose.Model, s string) []string {
	doc, err := prose.NewDocument(s, prose.WithSegmentation(false), prose.UsingModel(m))
	if err != nil {
		t.Fatal(err)
	}
	var w []string
	for _, e := range doc.Entities() {
		if e.Label == "PERSON" {
			w = append(w, strings.Fields(e.Text)...)
		}
	}
	return w
}

// TestSameAsProse checks that the fork labels the same words PERSON as
// prose itself, on corpus text and on the short windows the redactor
// sends.
func TestSameAsProse(t *testing.T) {
	doc, err := prose.NewDocument("Warden", prose.WithSegmentation(false))
	if err != nil {
		t.Fatal(err)
	}
	pm := doc.Model
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	// prose takes about a millisecond a text (ten under the race
	// detector): a quarter of the texts, the hand-written ones always.
	all := texts(t)
	var ts []string
	for i, s := range all {
		if i%4 == 0 || i >= len(all)-handWritten {
			ts = append(ts, s)
		}
	}
	diff, persons := 0, 0
	for _, s := range ts {
		want := proseWords(t, pm, s)
		var got []string
		m.PersonWords(s, func(w string) { got = append(got, w) })
		if len(want) > 0 {
			persons++
		}
		if !slices.Equal(got, want) {
			diff++
			if diff <= 10 {
				t.Errorf("PersonWords(%q) = %q, prose says %q", s, got, want)
			}
		}
	}
	t.Logf("%d texts, %d with a person, %d differ", len(ts), persons, diff)
	if persons < len(ts)/20 {
		t.Errorf("only %d of %d texts have a person: the test text is wrong", persons, len(ts))
	}
}

func BenchmarkPersonWords(b *testing.B) {
	m, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	s := "to Bartholomew Quigley about"
	b.ReportAllocs()
	for b.Loop() {
		m.PersonWords(s, func(string) {})
	}
}

func BenchmarkProsePersonWords(b *testing.B) {
	doc, _ := prose.NewDocument("Warden", prose.WithSegmentation(false))
	s := "to Bartholomew Quigley about"
	b.ReportAllocs()
	for b.Loop() {
		prose.NewDocument(s, prose.WithSegmentation(false), prose.UsingModel(doc.Model))
	}
}
