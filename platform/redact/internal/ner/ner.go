// Copyright (c) 2017-2018 Joseph Kato. MIT licence: see LICENSE.
// Forked from github.com/jdkato/prose/v2 v2.0.0 (document.go, model.go).

// Package ner finds the words of person names in short texts with the
// named-entity pipeline of github.com/jdkato/prose/v2: its tokenizer, its
// averaged-perceptron part-of-speech tagger and its maximum-entropy entity
// classifier, with prose's embedded English model.
//
// It gives the same answers as prose.NewDocument(text,
// prose.WithSegmentation(false)) (see the equivalence test), but the model
// is decoded once per process into flat tables and shared, read-only, by
// every call; features are encoded into one reused buffer and looked up
// once each (prose joins and looks up every feature once per label, and
// runs regular expressions on every token). A Model is safe for concurrent
// use.
package ner

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jdkato/prose/v2"
)

// A Model is prose's English model in the form this package reads.
type Model struct {
	// The tagger.
	tagClasses []string
	tagMap     map[string]string // words with one certain tag
	tagW       map[string][]classWeight

	// The entity classifier.
	labels   []string
	simple   []string                 // simplePOS of each label
	featW    map[string][]classWeight // "fname-fval" → weight per label
	wordlist map[string]struct{}
	person   [2]int // indexes of B-PERSON and I-PERSON in labels
}

type classWeight struct {
	class int32
	w     float64
}

var (
	loadOnce sync.Once
	model    *Model
	loadErr  error
)

// Default returns the model, decoding it the first time (about a second
// of CPU and 60 MB of memory, once per process).
func Default() (*Model, error) {
	loadOnce.Do(func() { model, loadErr = load() })
	return model, loadErr
}

func asset(name string, v any) error {
	b, err := prose.Asset(name)
	if err != nil {
		return err
	}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("ner: %s: %w", name, err)
	}
	return nil
}

func load() (*Model, error) {
	var (
		classes []string
		tags    map[string]string
		wts     map[string]map[string]float64
		labels  []string
		mapping map[string]int
		weights []float64
	)
	for _, a := range []struct {
		name string
		v    any
	}{
		{"model/AveragedPerceptron/classes.gob", &classes},
		{"model/AveragedPerceptron/tags.gob", &tags},
		{"model/AveragedPerceptron/weights.gob", &wts},
		{"model/Maxent/labels.gob", &labels},
		{"model/Maxent/mapping.gob", &mapping},
		{"model/Maxent/weights.gob", &weights},
	} {
		if err := asset(a.name, a.v); err != nil {
			return nil, err
		}
	}
	m := &Model{tagClasses: classes, tagMap: tags, labels: labels, person: [2]int{-1, -1}}

	classIdx := make(map[string]int32, len(classes))
	for i, c := range classes {
		classIdx[c] = int32(i)
	}
	m.tagW = make(map[string][]classWeight, len(wts))
	for feat, ws := range wts {
		cw := make([]classWeight, 0, len(ws))
		for c, w := range ws {
			i, ok := classIdx[c]
			if !ok {
				i = int32(len(m.tagClasses))
				m.tagClasses = append(m.tagClasses, c)
				classIdx[c] = i
			}
			cw = append(cw, classWeight{i, w})
		}
		slices.SortFunc(cw, func(a, b classWeight) int { return int(a.class - b.class) })
		m.tagW[feat] = cw
	}

	m.simple = make([]string, len(labels))
	for i, l := range labels {
		m.simple[i] = simplePOS(l)
		switch l {
		case "B-PERSON":
			m.person[0] = i
		case "I-PERSON":
			m.person[1] = i
		}
	}
	// prose keys its weights "fname-fval-label"; this model keys them
	// "fname-fval", with the weight of each label.
	suffix := make([]string, len(labels))
	for i, l := range labels {
		suffix[i] = "-" + l
	}
	m.featW = make(map[string][]classWeight, len(mapping)/2)
	for key, idx := range mapping {
		for i, l := range suffix {
			if strings.HasSuffix(key, l) {
				fk := key[:len(key)-len(l)]
				if idx < 0 || idx >= len(weights) {
					return nil, fmt.Errorf("ner: weight index %d out of range", idx)
				}
				m.featW[fk] = append(m.featW[fk], classWeight{int32(i), weights[idx]})
				break
			}
		}
	}
	for k, cw := range m.featW {
		slices.SortFunc(cw, func(a, b classWeight) int { return int(a.class - b.class) })
		m.featW[k] = cw
	}
	m.wordlist = make(map[string]struct{}, len(enWordList))
	for _, w := range enWordList {
		m.wordlist[w] = struct{}{}
	}
	return m, nil
}

// A token is one token of a text, with its part-of-speech tag and entity
// label.
type token struct {
	text  string
	tag   string
	label int
	root  int32  // the token whose tag and label this one shares (itself, mostly)
	span  string // the whitespace-separated span it came from, when cached
}

// state is the scratch space of one call.
type state struct {
	toks   []token
	suffs  []token
	ctx    []string // normalised words for the tagger
	hist   []string // simplified labels so far
	key    []byte
	scores []float64
	seen   []bool
}

var states = sync.Pool{New: func() any { return new(state) }}

// PersonWords calls f with each token of text that prose labels as part
// of a PERSON entity, in order.
func (m *Model) PersonWords(text string, f func(word string)) {
	st := states.Get().(*state)
	defer states.Put(st)
	st.toks = tokenize(st.toks[:0], &st.suffs, text)
	if len(st.toks) == 0 {
		return
	}
	m.tag(st)
	m.classify(st)
	m.chunk(st.toks, f)
}
