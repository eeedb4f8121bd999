// Copyright (c) 2017-2018 Joseph Kato. MIT licence: see LICENSE.
// Forked from github.com/jdkato/prose/v2 v2.0.0 tokenize.go: the same
// splitting, with the regular expression of isSpecial written out and no
// per-call cache.

package ner

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

var sanitizer = strings.NewReplacer(
	"\u201c", `"`,
	"\u201d", `"`,
	"\u2018", "'",
	"\u2019", "'",
	"&rsquo;", "'")

var (
	suffixes = []string{",", ")", `"`, "]", "!", ";", ".", "?", ":", "'"}
	prefixes = []string{"$", "(", `"`, "["}
)

func addToken(toks []token, s string) []token {
	if strings.TrimSpace(s) != "" {
		toks = append(toks, token{text: s})
	}
	return toks
}

// isSpecial: an emoticon, or `^(?:[A-Za-z]\.){2,}$|^[A-Z][a-z]{1,2}\.$`
// (U.S., Mr., Dr.).
func isSpecial(t string) bool {
	if _, ok := emoticons[t]; ok {
		return true
	}
	if n := len(t); n >= 4 && n%2 == 0 {
		ok := true
		for i := 0; i < n; i += 2 {
			if !isASCIILetter(t[i]) || t[i+1] != '.' {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	if n := len(t); n >= 3 && n <= 4 && 'A' <= t[0] && t[0] <= 'Z' && t[n-1] == '.' {
		for i := 1; i < n-1; i++ {
			if t[i] < 'a' || t[i] > 'z' {
				return false
			}
		}
		return true
	}
	return false
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// doSplit splits one whitespace-separated span into tokens.
func doSplit(toks []token, suffs *[]token, t string) []token {
	sf := (*suffs)[:0]
	last := 0
	for t != "" && utf8.RuneCountInString(t) != last {
		if isSpecial(t) {
			toks = addToken(toks, t)
			break
		}
		last = utf8.RuneCountInString(t)
		lower := strings.ToLower(t)
		if hasAnyPrefix(t, prefixes) {
			toks = addToken(toks, string(rune(t[0])))
			t = t[1:]
		} else if idx := hasAnyIndex(lower, "'ll", "'s", "'re", "'m"); idx > -1 {
			toks = addToken(toks, t[:idx])
			t = t[idx:]
		} else if idx := hasAnyIndex(lower, "n't"); idx > -1 {
			toks = addToken(toks, t[:idx])
			t = t[idx:]
		} else if hasAnySuffix(t, suffixes) {
			sf = append(sf, token{text: t[len(t)-1:]})
			t = t[:len(t)-1]
		} else {
			toks = addToken(toks, t)
		}
	}
	// The suffixes were split off last first.
	for i := len(sf) - 1; i >= 0; i-- {
		toks = append(toks, sf[i])
	}
	*suffs = sf[:0]
	return toks
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if len(s) > len(p) && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasAnySuffix(s string, ss []string) bool {
	for _, p := range ss {
		if len(s) > len(p) && strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}

func hasAnyIndex(s string, subs ...string) int {
	for _, sub := range subs {
		if idx := strings.Index(s, sub); idx >= 0 && len(s) > len(sub) {
			return idx
		}
	}
	return -1
}

// tokenize splits text into tokens as prose's iterTokenizer does. prose
// caches the tokens of each span but the last, and a span seen again
// appends the same *Token values again, so that the tag and label set on
// the later copy are those of the earlier one too; here the repeated
// tokens point at the first with root.
func tokenize(toks []token, suffs *[]token, text string) []token {
	clean := sanitizer.Replace(text)
	white := false
	start, index := 0, 0
	type span struct{ from, to int }
	var seenBuf [16]span
	seen := seenBuf[:0]
	split := func(s string) {
		for _, sp := range seen {
			if sp.to-sp.from > 0 && toks[sp.from].span == s {
				for k := sp.from; k < sp.to; k++ {
					t := toks[k]
					t.root = int32(k)
					toks = append(toks, t)
				}
				return
			}
		}
		from := len(toks)
		toks = doSplit(toks, suffs, s)
		for k := from; k < len(toks); k++ {
			toks[k].root = int32(k)
			toks[k].span = s
		}
		seen = append(seen, span{from, len(toks)})
	}
	for index < len(clean) {
		uc, size := utf8.DecodeRuneInString(clean[index:])
		if index == 0 {
			white = unicode.IsSpace(uc)
		}
		if unicode.IsSpace(uc) != white {
			if start < index {
				split(clean[start:index])
			}
			if uc == ' ' {
				start = index + 1
			} else {
				start = index
			}
			white = !white
		}
		index += size
	}
	if start < index {
		from := len(toks)
		toks = doSplit(toks, suffs, clean[start:index])
		for k := from; k < len(toks); k++ {
			toks[k].root = int32(k)
		}
	}
	return toks
}

var emoticons = map[string]int{
	"(-8":         1,
	"(-;":         1,
	"(-_-)":       1,
	"(._.)":       1,
	"(:":          1,
	"(=":          1,
	"(o:":         1,
	"(¬_¬)":       1,
	"(ಠ_ಠ)":       1,
	"(╯°□°）╯︵┻━┻": 1,
	"-__-":        1,
	"8-)":         1,
	"8-D":         1,
	"8D":          1,
	":(":          1,
	":((":         1,
	":(((":        1,
	":()":         1,
	":)))":        1,
	":-)":         1,
	":-))":        1,
	":-)))":       1,
	":-*":         1,
	":-/":         1,
	":-X":         1,
	":-]":         1,
	":-o":         1,
	":-p":         1,
	":-x":         1,
	":-|":         1,
	":-}":         1,
	":0":          1,
	":3":          1,
	":P":          1,
	":]":          1,
	":`(":         1,
	":`)":         1,
	":`-(":        1,
	":o":          1,
	":o)":         1,
	"=(":          1,
	"=)":          1,
	"=D":          1,
	"=|":          1,
	"@_@":         1,
	"O.o":         1,
	"O_o":         1,
	"V_V":         1,
	"XDD":         1,
	"[-:":         1,
	"^___^":       1,
	"o_0":         1,
	"o_O":         1,
	"o_o":         1,
	"v_v":         1,
	"xD":          1,
	"xDD":         1,
	"¯\\(ツ)/¯":    1,
}
