// Copyright (c) 2017-2018 Joseph Kato. MIT licence: see LICENSE.
// Forked from github.com/jdkato/prose/v2 v2.0.0 extract.go: the same
// maximum-entropy classifier and chunker, with each feature looked up once
// for all labels instead of once per label, and shape() without regular
// expressions.

package ner

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// classify labels every token, as prose's entityExtracter.classify.
func (m *Model) classify(st *state) {
	toks := st.toks
	n := len(toks)
	hist := st.hist[:0]
	if cap(st.scores) < len(m.labels) {
		st.scores = make([]float64, max(len(m.labels), len(m.tagClasses)))
		st.seen = make([]bool, cap(st.scores))
	}
	scores := st.scores[:len(m.labels)]
	for i := 0; i < n; i++ {
		clear(scores)
		word := toks[i].text
		lower := strings.ToLower(word)
		pos := m.tagOf(i, toks)
		prevShape := "None"
		var prevtag, prevword, prevpos, nextword, nextpos string
		if i == 0 {
			prevtag, prevword, prevpos = "None", "None", "None"
		} else {
			prevword = strings.ToLower(toks[i-1].text)
			prevpos = m.tagOf(i-1, toks)
			prevtag = hist[i-1]
			if i > 1 {
				prevShape = shape(toks[i-1].text)
			}
		}
		if i == n-1 {
			nextword, nextpos = "None", "None"
		} else {
			nextword = strings.ToLower(toks[i+1].text)
			nextpos = strings.ToLower(m.tagOf(i+1, toks))
		}
		basic := "False"
		if _, ok := m.wordlist[word]; ok {
			basic = "True"
		}
		// featureOrder: the order prose adds the weights of each label in.
		m.feature(st, scores, "bias", "True")
		m.feature(st, scores, "en-wordlist", basic)
		m.feature(st, scores, "nextpos", nextpos)
		m.feature(st, scores, "nextword", nextword)
		m.feature(st, scores, "pos", pos)
		m.feature(st, scores, "pos+prevtag", pos, "+", prevtag)
		m.feature(st, scores, "prefix3", strings.ToLower(word[:min(len(word), 3)]))
		m.feature(st, scores, "prevpos", prevpos)
		m.feature(st, scores, "prevtag", prevtag)
		m.feature(st, scores, "prevword", prevword)
		m.feature(st, scores, "shape", shape(word))
		m.feature(st, scores, "shape+prevtag", prevShape, "+", prevtag)
		m.feature(st, scores, "suffix3", strings.ToLower(word[len(word)-min(len(word), 3):]))
		m.feature(st, scores, "word", word)
		m.feature(st, scores, "word+nextpos", lower, "+", nextpos)
		m.feature(st, scores, "word.lower", lower)
		m.feature(st, scores, "wordlen", strconv.Itoa(len(word)))
		best, label := math.Inf(-1), -1
		for l, s := range scores {
			if s > best {
				best, label = s, l
			}
		}
		toks[toks[i].root].label = label
		h := ""
		if label >= 0 {
			h = m.simple[label]
		}
		hist = append(hist, h)
	}
	st.hist = hist
}

// tagOf is the tag of token i: that of the token it shares its tag with.
func (m *Model) tagOf(i int, toks []token) string { return toks[toks[i].root].tag }

// feature adds the weights of the feature name=value to each label's
// score.
func (m *Model) feature(st *state, scores []float64, name string, value ...string) {
	k := append(st.key[:0], name...)
	k = append(k, '-')
	for _, v := range value {
		k = append(k, v...)
	}
	st.key = k
	for _, cw := range m.featW[string(k)] {
		scores[cw.class] += cw.w
	}
}

// simplePOS is prose's simplePOS.
func simplePOS(pos string) string {
	if strings.HasPrefix(pos, "V") {
		return "v"
	}
	return strings.Split(pos, "-")[0]
}

// shape is prose's shape, whose `\W+$` and `\w+$` read the last character.
func shape(word string) string {
	if isNumeric(word) {
		return "number"
	}
	if word == "" {
		return "other"
	}
	r, _ := utf8.DecodeLastRuneInString(word)
	if r >= utf8.RuneSelf || !isWordByte(byte(r)) {
		return "punct"
	}
	if strings.ToLower(word) == word {
		return "downcase"
	}
	//lint:ignore SA1019 prose's behaviour, word boundaries included.
	if strings.Title(word) == word { //nolint:staticcheck
		return "upcase"
	}
	return "mixedcase"
}

// isNumeric reports whether strconv.ParseFloat accepts s, calling it
// only where it can.
func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.' ||
		c == 'i' || c == 'I' || c == 'n' || c == 'N') {
		return false
	}
	if (c == 'i' || c == 'I' || c == 'n' || c == 'N') &&
		!strings.EqualFold(s, "inf") && !strings.EqualFold(s, "infinity") && !strings.EqualFold(s, "nan") {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// chunk calls f with the text of each token in a PERSON entity, as
// prose's chunk, coalesce and parseEntities find them.
func (m *Model) chunk(toks []token, f func(string)) {
	end := -2 // the label that continues the entity being read; -2 for none
	label := func(i int) int { return toks[toks[i].root].label }
	tagOf := func(i int) string { return toks[toks[i].root].tag }
	o := m.labelIndex("O")
	emit := func(parts []int) {
		// parseEntities: PERSON when the entity is two tokens one of
		// which is B-PERSON; otherwise the type of its first label.
		person := false
		if len(parts) == 2 {
			for _, p := range parts {
				if label(p) == m.person[0] {
					person = true
				}
			}
		}
		if !person {
			l := label(parts[0])
			person = l == m.person[0] || l == m.person[1]
		}
		if person {
			for _, p := range parts {
				f(toks[p].text)
			}
		}
	}
	var partsBuf [16]int
	parts := partsBuf[:0]
	for i := range toks {
		l := label(i)
		idx := len(parts)
		if (l != o && l != end) ||
			(idx > 0 && tagOf(i) == tagOf(parts[idx-1])) ||
			(idx > 0 && tagOf(i) == "CD" && label(parts[idx-1]) != o) {
			end = m.continuation(l)
			parts = append(parts, i)
		} else if (l == o && end != -2) || l == end {
			if l != o {
				parts = append(parts, i)
			}
			emit(parts)
			end = -2
			parts = parts[:0]
		}
	}
}

func (m *Model) labelIndex(l string) int {
	for i, x := range m.labels {
		if x == l {
			return i
		}
	}
	return -1
}

// continuation is strings.Replace(label, "B", "I", 1) of prose, as an index.
func (m *Model) continuation(l int) int {
	if l < 0 {
		return -3
	}
	c := strings.Replace(m.labels[l], "B", "I", 1)
	if i := m.labelIndex(c); i >= 0 {
		return i
	}
	return -3 - l // a label not in the model: matches nothing but itself
}
