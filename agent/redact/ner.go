package redact

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jdkato/prose/v2"
)

// The named-entity layer of name detection: github.com/jdkato/prose/v2, a
// pure-Go averaged-perceptron tagger and maximum-entropy entity classifier
// with its model embedded in the binary. It is the slow part of
// redaction (about 70 µs a word), so it only ever sees a few words around
// a run of capitalised words that the cheaper layers (cue phrases, the
// gazetteer) could not decide; see pii.go.

// nerModel is loaded once per process: loading the embedded model takes
// about 300 ms, running it on a short window well under a millisecond.
var nerModel = sync.OnceValue(func() *prose.Model {
	doc, err := prose.NewDocument("Warden", prose.WithSegmentation(false))
	if err != nil {
		return nil
	}
	return doc.Model
})

// WithNER turns the named-entity layer of name detection on (the default)
// or off. Off, names are still found by cue phrases, honorifics, the
// gazetteer of given names and field names; benchmarks use it to show
// what the layer costs.
func WithNER(on bool) Option {
	return func(r *Redactor) { r.noNER = !on }
}

// nerCalls counts the texts given to the model, for tests that check it
// is asked only where a name could be.
var nerCalls atomic.Int64

// personWords returns the words prose labels as part of a PERSON entity in
// text.
func personWords(text string) []string {
	nerCalls.Add(1)
	m := nerModel()
	if m == nil {
		return nil
	}
	doc, err := prose.NewDocument(text, prose.WithSegmentation(false), prose.UsingModel(m))
	if err != nil {
		return nil
	}
	var words []string
	for _, e := range doc.Entities() {
		if e.Label == "PERSON" {
			words = append(words, strings.Fields(e.Text)...)
		}
	}
	return words
}
