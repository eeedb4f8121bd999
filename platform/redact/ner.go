package redact

import (
	"sync/atomic"

	"github.com/wardenhq/warden/platform/redact/internal/ner"
)

// The named-entity layer of name detection: the tokenizer, tagger and
// entity classifier of github.com/jdkato/prose/v2, forked into
// internal/ner so that its model is decoded once per process and shared,
// and features are encoded without regular expressions or per-token maps
// (about 35 µs for a window of four words, where prose takes about 1 ms).
// It still only sees a few words around a run of capitalised words that
// the cheaper layers (cue phrases, the gazetteer) could not decide; see
// pii.go.

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

// personWords calls f with the words the model labels as part of a
// PERSON entity in text.
func personWords(text string, f func(word string)) {
	nerCalls.Add(1)
	m, err := ner.Default()
	if err != nil {
		return
	}
	m.PersonWords(text, f)
}
