package redact

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Marked is a value a caller declared personal, and the kind it names
// (one of PersonalKinds, as in a schema's PersonalKeyword): a journey's
// metadata member marked "x-warden-personal", for instance.
type Marked struct {
	Kind  string
	Value string
}

// MinMarked is the shortest value, in characters, Marking looks for: a
// shorter one would be found inside too many words.
const MinMarked = 2

// markedValues finds declared values in text: one expression of every
// value, longest first, case ignored and any run of spaces between its
// words, and the token each is replaced by.
type markedValues struct {
	re     *regexp.Regexp
	tokens []string // by capture group, in the order of the alternatives
	values []markedValue
}

type markedValue struct{ value, token string }

// Marking returns a Redactor like r (same key, detectors, fields and
// allow-list) that also tokenises vals wherever they are written — in
// free text, in JSON strings and numbers, in keys, and in what Declare
// returns — with the token of their declared kind (the one Token writes,
// so a declared "Zyx Qwerty" and a detected "zyx qwerty" get one token),
// whatever detection says of them. A value is found whole, in any case
// and with any spaces between its words, where no letter or digit comes
// right before or after it. Values shorter than MinMarked characters,
// and tokens, are ignored; no values: r itself. The allow-list never
// keeps a marked value readable.
func (r *Redactor) Marking(vals []Marked) *Redactor {
	seen := map[string]bool{}
	var vs []markedValue
	if r.marked != nil { // marking again adds to what r marks
		vs = append(vs, r.marked.values...)
		for _, v := range vs {
			seen[strings.ToLower(v.value)] = true
		}
	}
	added := false
	for _, m := range vals {
		v := strings.TrimSpace(m.Value)
		if utf8.RuneCountInString(v) < MinMarked || isToken(v) || seen[strings.ToLower(v)] {
			continue
		}
		seen[strings.ToLower(v)] = true
		kind, ok := personalKinds[m.Kind]
		if !ok {
			kind = KindPersonal
		}
		vs = append(vs, markedValue{v, r.Token(kind, v)})
		added = true
	}
	if !added {
		return r
	}
	sort.SliceStable(vs, func(i, j int) bool { return len(vs[i].value) > len(vs[j].value) })
	alts := make([]string, len(vs))
	toks := make([]string, len(vs))
	for i, v := range vs {
		parts := strings.Fields(v.value)
		for k, p := range parts {
			parts[k] = regexp.QuoteMeta(p)
		}
		alts[i] = "(" + strings.Join(parts, `\s+`) + ")"
		toks[i] = v.token
	}
	k := r.clone()
	k.marked = &markedValues{re: regexp.MustCompile(`(?i)` + strings.Join(alts, "|")), tokens: toks, values: vs}
	return k
}

// replace returns s with every declared value in it replaced by its token.
func (m *markedValues) replace(s string) string {
	if m == nil || len(s) < MinMarked {
		return s
	}
	idx := m.re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range idx {
		start, end := loc[0], loc[1]
		if start < last || !standsApart(s, start, end) {
			continue
		}
		g := 0
		for ; g < len(m.tokens); g++ {
			if loc[2+2*g] >= 0 {
				break
			}
		}
		b.WriteString(s[last:start])
		b.WriteString(m.tokens[g])
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// standsApart tells whether s[start:end] stands apart: no letter or digit
// right before or after it, and it is not inside a token.
func standsApart(s string, start, end int) bool {
	if r, _ := utf8.DecodeLastRuneInString(s[:start]); start > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(s[end:]); end < len(s) && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		return false
	}
	// Inside a token already written ("[name:3f9a…]"): the hex digits are
	// no declared value.
	if open := strings.LastIndexByte(s[:start], '['); open >= 0 && !strings.ContainsAny(s[open:start], " ]") {
		if e := tokenEnd(s, open); e > 0 && e >= end {
			return false
		}
	}
	return true
}
