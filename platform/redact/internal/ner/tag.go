// Copyright 2013 Matthew Honnibal; Copyright (c) 2017-2018 Joseph Kato.
// MIT licence: see LICENSE. Forked from github.com/jdkato/prose/v2 v2.0.0
// tag.go: the same averaged-perceptron tagger, with its features written
// into one reused buffer and looked up once each, and its regular
// expressions written out or run only where they can match.

package ner

import (
	"math"
	"strconv"
	"strings"

	"github.com/mingrammer/commonregex"
)

// tag sets the part-of-speech tag of every token.
func (m *Model) tag(st *state) {
	toks := st.toks
	n := len(toks)
	ctx := st.ctx[:0]
	ctx = append(ctx, "-START-", "-START2-")
	for i := range toks {
		ctx = append(ctx, normalize(toks[i].text))
	}
	ctx = append(ctx, "-END-", "-END2-")
	st.ctx = ctx
	p1, p2 := "-START-", "-START2-"
	for i := 0; i < n; i++ {
		word := toks[i].text
		var tag string
		var found bool
		if word == "-" {
			tag = "-"
		} else if _, ok := emoticons[word]; ok {
			tag = "SYM"
		} else if strings.HasPrefix(word, "@") ||
			strings.IndexByte(word, '.') >= 0 && commonregex.LinkRegex.MatchString(word) ||
			strings.IndexByte(word, '@') >= 0 && commonregex.EmailRegex.MatchString(word) {
			// Both patterns need a '.' or an '@' to match.
			tag = "NN"
		} else if isNone(word) {
			tag = "-NONE-"
		} else if isKeep(word) {
			tag = word
		} else if tag, found = m.tagMap[word]; !found {
			tag = m.predict(st, i, ctx, word, p1, p2)
		}
		toks[toks[i].root].tag = tag
		p2 = p1
		p1 = tag
	}
}

// isNone: `^(?:0|\*[\w?]\*|\*\-\d{1,3}|\*[A-Z]+\*\-\d{1,3}|\*)$`.
func isNone(w string) bool {
	switch {
	case w == "0" || w == "*":
		return true
	case len(w) < 3 || w[0] != '*':
		return false
	case len(w) == 3 && w[2] == '*' && (isWordByte(w[1]) || w[1] == '?'):
		return true
	}
	rest := w[1:]
	if rest[0] != '-' {
		i := 0
		for i < len(rest) && 'A' <= rest[i] && rest[i] <= 'Z' {
			i++
		}
		if i == 0 || i+1 >= len(rest) || rest[i] != '*' || rest[i+1] != '-' {
			return false
		}
		rest = rest[i+1:]
	}
	d := rest[1:]
	if len(d) < 1 || len(d) > 3 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// isKeep: `^\-[A-Z]{3}\-$`.
func isKeep(w string) bool {
	if len(w) != 5 || w[0] != '-' || w[4] != '-' {
		return false
	}
	for i := 1; i < 4; i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// predict is featurize and averagedPerceptron.predict of prose.
func (m *Model) predict(st *state, i int, ctx []string, w, p1, p2 string) string {
	if cap(st.scores) < len(m.tagClasses) {
		st.scores = make([]float64, len(m.tagClasses))
		st.seen = make([]bool, len(m.tagClasses))
	}
	scores, seen := st.scores[:len(m.tagClasses)], st.seen[:len(m.tagClasses)]
	clear(scores)
	clear(seen)
	suf := min(len(w), 3)
	i = min(len(ctx)-2, i+2)
	iminus := min(len(ctx[i-1]), 3)
	iplus := min(len(ctx[i+1]), 3)
	add := func(parts ...string) {
		k := st.key[:0]
		for j, p := range parts {
			if j > 0 {
				k = append(k, ' ')
			}
			k = append(k, p...)
		}
		st.key = k
		for _, cw := range m.tagW[string(k)] {
			scores[cw.class] += cw.w
			seen[cw.class] = true
		}
	}
	add("bias")
	add("i suffix", w[len(w)-suf:])
	add("i pref1", string(rune(w[0])))
	add("i-1 tag", p1)
	add("i-2 tag", p2)
	add("i tag+i-2 tag", p1, p2)
	add("i word", ctx[i])
	add("i-1 tag+i word", p1, ctx[i])
	add("i-1 word", ctx[i-1])
	add("i-1 suffix", ctx[i-1][len(ctx[i-1])-iminus:])
	add("i-2 word", ctx[i-2])
	add("i+1 word", ctx[i+1])
	add("i+1 suffix", ctx[i+1][len(ctx[i+1])-iplus:])
	add("i+2 word", ctx[i+2])
	best, class := math.Inf(-1), -1
	for c, ok := range seen {
		if ok && scores[c] > best {
			best, class = scores[c], c
		}
	}
	if class < 0 {
		return ""
	}
	return m.tagClasses[class]
}

// normalize is prose's normalize.
func normalize(word string) string {
	if word == "" {
		return word
	}
	first := word[0]
	if first != '-' && strings.IndexByte(word, '-') >= 0 {
		return "!HYPHEN"
	}
	if len(word) == 4 && atoiOK(word) {
		return "!YEAR"
	}
	if '0' <= first && first <= '9' {
		return "!DIGITS"
	}
	return strings.ToLower(word)
}

// atoiOK reports whether strconv.Atoi accepts s.
func atoiOK(s string) bool {
	c := s[0]
	if !('0' <= c && c <= '9' || c == '+' || c == '-') {
		return false
	}
	_, err := strconv.Atoi(s)
	return err == nil
}
