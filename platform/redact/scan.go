package redact

import (
	"slices"
	"strings"
)

// MaxText is the longest text String redacts whole. Redaction costs time
// in proportion to the text (about 10 MB a CPU second for the densest,
// docs/redaction.md), so a longer text is cut to bound the work of one
// call: String redacts it up to the last line break in its first MaxText
// bytes and replaces the rest with one token of kind "omitted", or the
// whole text when no line break comes in the last 64 KiB before MaxText.
// A value never continues across a line break, so the cut leaves no part
// of one readable.
const MaxText = 1 << 20

// KindOmitted names the token that replaces what a text longer than the
// bound had after it (MaxText; JSON has a bound of its own).
const KindOmitted = "omitted"

// maxCutBack is how far before MaxText String looks for a line break to
// cut a long text at.
const maxCutBack = 64 << 10

// String returns s with every sensitive value it finds replaced by a
// token. Text without any returns unchanged and without allocating. Text
// longer than MaxText is cut (see MaxText).
func (r *Redactor) String(s string) string {
	if r.marked != nil {
		s = r.marked.replace(s)
	}
	if len(s) > MaxText {
		return r.long(s)
	}
	return r.whole(s)
}

// long redacts a text longer than MaxText: the part before a line break
// near MaxText as usual, the rest as one token keyed on the whole text.
func (r *Redactor) long(s string) string {
	tok := r.omitted(s)
	head := ""
	if c := cutAt(s, MaxText); c > 0 {
		head = r.whole(s[:c])
	}
	// Tokens may be longer than what they replace. The result is itself
	// at most MaxText long, so redacting it again gives it back.
	if len(head)+len(tok) > MaxText {
		if c := cutAt(head, MaxText-len(tok)); c > 0 {
			head = head[:c]
		} else {
			head = ""
		}
	}
	return head + tok
}

// omitted is the token that replaces s whole, keyed on s as it is: what
// normalising would do to a long text costs more than it is worth.
func (r *Redactor) omitted(s string) string {
	var b strings.Builder
	b.Grow(len(KindOmitted) + tokenHex + 3)
	r.appendToken(&b, KindOmitted, s)
	return b.String()
}

// cutAt returns the end of the last line break in s[:limit] that is at
// most maxCutBack before limit, or -1. A line break is a '\n', or the
// "\n" escape of JSON text, which the detectors also take for one.
func cutAt(s string, limit int) int {
	for i := limit - 1; i >= 0 && i >= limit-maxCutBack; i-- {
		switch {
		case s[i] == '\n':
			return i + 1
		case s[i] == 'n' && i > 0 && s[i-1] == '\\':
			return i + 1
		}
	}
	return -1
}

// whole redacts all of s.
func (r *Redactor) whole(s string) string {
	// One pass almost always reaches the fixed point. Another is run
	// only when one changed something, to make redaction idempotent even
	// where a replacement changes what a neighbour looks like. Each pass
	// that changes anything turns clear text into tokens, which are never
	// scanned again, so the loop ends; the bound is a guard all the same,
	// because a logger must never hang.
	out, toks := r.pass(s, nil)
	for n := 1; n < maxPasses && len(toks) > 0; n++ {
		if len(out) < regionMin || r.noRegions {
			out, toks = r.pass(out, toks[:0])
		} else {
			out, toks = r.passRegions(out, toks)
		}
	}
	return out
}

const maxPasses = 4

// regionMin is the length from which the passes after the first read only
// the lines around the tokens the pass before wrote (passRegions).
const regionMin = 4096

// regionPad is how far around a token a later pass reads, at least: the
// line it is on, the line before and the line after, and this many bytes
// either side, to whole lines. The detectors look at most a line and 48
// bytes around a value, so text further from every new token reads as it
// did in the pass before, which found nothing there.
const regionPad = 128

// passRegions is a pass over s that reads only the lines around toks,
// the tokens the pass before wrote into s (in order). It returns s with
// what it finds replaced, and where the new tokens are.
func (r *Redactor) passRegions(s string, toks [][2]int) (string, [][2]int) {
	var b strings.Builder
	var out [][2]int
	// Line boundaries come from one index of the text's line breaks, not
	// from a search per token: on a text of few, long lines (a JSON
	// document, where line breaks are escaped) a search from each token to
	// the end of its line made the pass quadratic.
	ls := newLines(s)
	prev := 0 // s[:prev] is written
	grown := false
	for i := 0; i < len(toks); {
		from := ls.start(ls.start(max(0, toks[i][0]-regionPad)) - 1)
		to := ls.end(ls.end(min(len(s), toks[i][1]+regionPad)) + 1)
		// Regions that touch are read as one.
		i++
		for i < len(toks) && toks[i][0]-regionPad <= to {
			to = ls.end(ls.end(min(len(s), toks[i][1]+regionPad)) + 1)
			i++
		}
		from = max(from, prev)
		ro, rt := r.pass(s[from:to], nil)
		if len(rt) == 0 {
			continue
		}
		if !grown {
			b.Grow(len(s) + len(rt)*(tokenHex+4))
			grown = true
		}
		b.WriteString(s[prev:from])
		base := b.Len()
		for _, t := range rt {
			out = append(out, [2]int{base + t[0], base + t[1]})
		}
		b.WriteString(ro)
		prev = to
	}
	if len(out) == 0 {
		return s, nil
	}
	b.WriteString(s[prev:])
	return b.String(), out
}

// lines is where a text's line breaks are, in order.
type lines struct {
	n  int     // the text's length
	nl []int32 // offsets of its '\n's
}

func newLines(s string) lines {
	l := lines{n: len(s)}
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '\n')
		if k < 0 {
			break
		}
		l.nl = append(l.nl, int32(i+k))
		i += k + 1
	}
	meter.add(len(s))
	return l
}

// start returns the start of the line offset i is on (0 for i <= 0).
func (l lines) start(i int) int {
	if i <= 0 {
		return 0
	}
	// The last line break before i.
	k, _ := slices.BinarySearch(l.nl, int32(i))
	if k == 0 {
		return 0
	}
	return int(l.nl[k-1]) + 1
}

// end returns the end of the line offset i is on, its '\n' included.
func (l lines) end(i int) int {
	if i >= l.n {
		return l.n
	}
	// The first line break at or after i.
	k, _ := slices.BinarySearch(l.nl, int32(i))
	if k == len(l.nl) {
		return l.n
	}
	return int(l.nl[k]) + 1
}

// pass redacts s once. It returns the result and, appended to toks, where
// the tokens it wrote are in it; none when it found nothing.
func (r *Redactor) pass(s string, toks [][2]int) (string, [][2]int) {
	meter.add(len(s))
	f, isFolded := fold(s)
	t := s
	if isFolded {
		t = f.s
	}
	ms := r.find(t)
	if len(ms) == 0 {
		return s, toks
	}
	if isFolded {
		// The detectors read the folded text; the tokens replace the
		// original characters, and are computed from the folded value.
		prev := 0
		out := ms[:0]
		for _, m := range ms {
			if m.Value == "" {
				m.Value = normalise(m.Kind, t[m.Start:m.End])
			}
			m.Start, m.End = max(f.start(m.Start), prev), f.end(m.End)
			if m.Start >= m.End {
				continue
			}
			prev = m.End
			out = append(out, m)
		}
		ms = out
	}
	return r.replace(s, ms, toks)
}

// find returns the values in s, in order and not overlapping.
func (r *Redactor) find(s string) []Match {
	sc := scanner{r: r, s: s}
	if r.noPrefilter || needsScan(s) {
		sc.run()
	}
	if len(r.detectors) > 0 {
		sc.m = sc.runDetectors()
	}
	sc.addPII(r.piiFind(cjkFind(idFind(nil, s), s), s))
	return sc.m
}

// addPII adds the matches of the word-level detectors (pii.go) that do not
// overlap a match of the byte-level or plugged-in ones, or each other: a
// plugged-in national identifier is more specific than an "[id:…]" found
// by its cue.
//
// It merges the two sorted lists in one walk: inserting each match in
// place cost a copy of the matches after it, quadratic in a text whose
// word-level and byte-level matches alternate.
func (sc *scanner) addPII(pm []Match) {
	if len(pm) == 0 {
		return
	}
	slices.SortFunc(pm, func(a, b Match) int { return a.Start - b.Start })
	ms := sc.m
	out := make([]Match, 0, len(ms)+len(pm))
	j := 0 // ms[j:] is not yet in out
	for _, m := range pm {
		if cutsToken(sc.s, m.Start, m.End) {
			continue
		}
		for j < len(ms) && ms[j].Start < m.Start {
			out = append(out, ms[j])
			j++
		}
		// Matches added before with the same start come after m in
		// start order: m may cover them.
		at := len(out)
		for at > 0 && out[at-1].Start >= m.Start {
			at--
		}
		if at > 0 && out[at-1].End > m.Start {
			continue
		}
		// Matches it covers whole give way ("DOB: 2 August 1992", where
		// the key's value ends at the space, is one date of birth).
		t := at
		for t < len(out) && out[t].End <= m.End && !out[t].plugged {
			t++
		}
		if t < len(out) {
			continue // out[t] starts where m does and is not covered
		}
		to := j
		for to < len(ms) && ms[to].End <= m.End && !ms[to].plugged {
			to++
		}
		if to < len(ms) && ms[to].Start < m.End {
			continue
		}
		out = append(out[:at], m)
		j = to
	}
	meter.add(len(ms) + len(pm))
	sc.m = append(out, ms[j:]...)
}

// needsScan is the pre-filter: text without a digit, '@', ':' or '=' has
// nothing a built-in detector can find, and most prose is like that.
func needsScan(s string) bool {
	for i := 0; i < len(s); i++ {
		if class[s[i]]&clTrigger != 0 {
			return true
		}
	}
	return false
}

func (r *Redactor) replace(s string, ms []Match, toks [][2]int) (string, [][2]int) {
	var b strings.Builder
	b.Grow(len(s) + len(ms)*(tokenHex+4))
	prev := 0
	for _, m := range ms {
		b.WriteString(s[prev:m.Start])
		norm := m.Value
		if norm == "" {
			norm = normalise(m.Kind, s[m.Start:m.End])
		}
		start := b.Len()
		r.appendToken(&b, m.Kind, norm)
		toks = append(toks, [2]int{start, b.Len()})
		prev = m.End
	}
	b.WriteString(s[prev:])
	return b.String(), toks
}

// A scanner makes one pass over a text. It walks the text once, left to
// right, jumping from one place a value could start to the next: the start
// of a word, '@', '+', '(', ':', '-', '[' and '\'. Each detector there is a
// small hand-written parser that looks only as far as it needs to.
type scanner struct {
	r      *Redactor
	s      string
	m      []Match  // in order, not overlapping
	prot   [][2]int // tokens already in the text
	entEnd int      // end of the last word the entropy check looked at
	g      [maxGroups]grp
}

func (sc *scanner) run() {
	s := sc.s
	for i := 0; i < len(s); {
		c := s[i]
		if class[c]&clWord != 0 {
			i = sc.word(i)
			continue
		}
		switch c {
		case '@':
			i = sc.email(i)
		case '+':
			i = sc.plus(i)
		case '(':
			i = sc.paren(i)
		case '[':
			if e := tokenEnd(s, i); e > 0 {
				sc.prot = append(sc.prot, [2]int{i, e})
				i = e
			} else {
				i++
			}
		case ':':
			i = sc.colon(i)
		case '-':
			i = sc.dash(i)
		case '\\':
			i = sc.escape(i)
		default:
			i++
		}
	}
}

// add records a match. A match that covers earlier ones replaces them (an
// e-mail address whose local part looked like something else); one that
// only overlaps an earlier one is merged into it, so that no part of
// either is left in the clear.
func (sc *scanner) add(start, end int, kind, value string) {
	if cutsToken(sc.s, start, end) {
		return
	}
	for len(sc.m) > 0 {
		last := &sc.m[len(sc.m)-1]
		if last.End <= start {
			break
		}
		if start <= last.Start && end >= last.End {
			sc.m = sc.m[:len(sc.m)-1]
			continue
		}
		if start < last.Start || end > last.End {
			u0, u1 := min(start, last.Start), max(end, last.End)
			if !cutsToken(sc.s, u0, u1) {
				last.Start, last.End, last.Value = u0, u1, ""
			}
		}
		return
	}
	sc.m = append(sc.m, Match{Start: start, End: end, Kind: kind, Value: value})
}

// cutsToken reports whether s[start:end] takes part of a token but not
// all of it; replacing it would leave text that is no longer a token and
// would be redacted again and again.
func cutsToken(s string, start, end int) bool {
	from := max(0, start-(maxKind+tokenHex+3))
	meter.add(end - from)
	for q := from; q < end; q++ {
		if s[q] != '[' {
			continue
		}
		if te := tokenEnd(s, q); te > 0 && start < te && (q < start || te > end) {
			return true
		}
	}
	return false
}

// runDetectors adds the matches of the registered detectors that do not
// overlap a built-in match or a token already in the text, merging each
// detector's sorted matches into the list in one walk.
func (sc *scanner) runDetectors() []Match {
	ms := sc.m
	var buf []Match
	for _, d := range sc.r.detectors {
		buf = d.Detect(buf[:0], sc.s)
		if len(buf) == 0 {
			continue
		}
		// The contract asks for increasing order; a detector that breaks
		// it is sorted rather than trusted.
		if !slices.IsSortedFunc(buf, func(a, b Match) int { return a.Start - b.Start }) {
			slices.SortStableFunc(buf, func(a, b Match) int { return a.Start - b.Start })
		}
		out := make([]Match, 0, len(ms)+len(buf))
		j := 0
		for _, m := range buf {
			if m.Start < 0 || m.End > len(sc.s) || m.Start >= m.End || sc.inToken(m.Start, m.End) {
				continue
			}
			for j < len(ms) && ms[j].Start < m.Start {
				out = append(out, ms[j])
				j++
			}
			if len(out) > 0 && out[len(out)-1].End > m.Start || j < len(ms) && ms[j].Start < m.End {
				continue
			}
			m.Kind = sanitiseKind(m.Kind)
			m.plugged = true
			out = append(out, m)
		}
		meter.add(len(ms) + len(buf))
		ms = append(out, ms[j:]...)
	}
	return ms
}

// inToken reports whether s[start:end] overlaps a token already in the
// text; the tokens are in order and do not overlap.
func (sc *scanner) inToken(start, end int) bool {
	k, _ := slices.BinarySearchFunc(sc.prot, start, func(p [2]int, start int) int {
		if p[1] <= start {
			return -1
		}
		return 1
	})
	return k < len(sc.prot) && sc.prot[k][0] < end
}

// word handles the word starting at s[i] and returns where to go on.
func (sc *scanner) word(i int) int {
	s := sc.s
	j := i + 1
	for j < len(s) && isWord(s[j]) {
		j++
	}
	if sc.prevWord(i) {
		return j
	}
	if isDigit(s[i]) {
		return sc.number(i, j)
	}
	return sc.letters(i, j)
}

// prevWord reports whether s[i] continues a word. An escape such as the
// "\n" of JSON text inside a log line ends the word before it.
func (sc *scanner) prevWord(i int) bool {
	s := sc.s
	if i == 0 || !isWord(s[i-1]) {
		return false
	}
	if i >= 2 && s[i-2] == '\\' {
		switch s[i-1] {
		case 'n', 't', 'r', 'b', 'f':
			return false
		}
	}
	if i >= 6 && s[i-6] == '\\' && s[i-5] == 'u' && isHex(s[i-4]) && isHex(s[i-3]) && isHex(s[i-2]) {
		return false
	}
	return true
}

// skipWord returns the end of the word s[i] is in, or i.
func skipWord(s string, i int) int {
	for i < len(s) && isWord(s[i]) {
		i++
	}
	return i
}

func (sc *scanner) escape(i int) int {
	s := sc.s
	if i+1 >= len(s) {
		return i + 1
	}
	switch s[i+1] {
	case 'n', 't', 'r', '"', '\\', '/', 'b', 'f':
		return i + 2
	case 'u':
		if i+5 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]) {
			return i + 6
		}
	}
	return i + 1
}

// colon handles "://" (a password in a URL) and "::" (an IPv6 address).
func (sc *scanner) colon(i int) int {
	s := sc.s
	if strings.HasPrefix(s[i:], "://") {
		return sc.userinfo(i + 3)
	}
	if i+1 < len(s) && s[i+1] == ':' && !sc.prevWord(i) {
		if e := sc.ipv6(i); e > 0 {
			return e
		}
		return i + 2
	}
	return i + 1
}

// email handles the '@' at s[i]: an address is a local part of
// [A-Za-z0-9._%+-] and a domain of at least two labels ending in an
// alphabetic top-level domain. Quoted local parts are not recognised.
func (sc *scanner) email(i int) int {
	s := sc.s
	ls := i
	for ls > 0 && class[s[ls-1]]&clLocal != 0 {
		ls--
		if i-ls > 80 { // a long run before '@' is a blob, not an address
			return i + 1
		}
	}
	// A JSON escape just before the address is not part of it.
	if ls > 0 && s[ls-1] == '\\' {
		switch {
		case s[ls] == 'u' && i-ls > 5 && isHex(s[ls+1]) && isHex(s[ls+2]) && isHex(s[ls+3]) && isHex(s[ls+4]):
			ls += 5
		case s[ls] == 'n' || s[ls] == 't' || s[ls] == 'r':
			ls++
		}
	}
	for ls < i && (s[ls] == '.' || s[ls] == '-' || s[ls] == '+') {
		ls++
	}
	if ls == i || i-ls > 64 || s[i-1] == '.' {
		return i + 1
	}
	if i-ls == 3 && s[ls:i] == "git" { // git@github.com:org/repo is not a person
		return i + 1
	}
	// Domain labels.
	j := i + 1
	labels, lastStart := 0, j
	for {
		k := j
		for k < len(s) && (isAlnum(s[k]) || s[k] == '-') && k-j < 63 {
			k++
		}
		if k == j || s[j] == '-' || s[k-1] == '-' {
			break
		}
		labels++
		lastStart = j
		j = k
		if j+1 < len(s) && s[j] == '.' && isAlnum(s[j+1]) {
			j++
			continue
		}
		break
	}
	if labels < 2 || j < len(s) && (isWord(s[j]) || s[j] == '-') {
		return i + 1
	}
	if !topLevelDomain(s[lastStart:j]) {
		return i + 1
	}
	sc.add(ls, j, KindEmail, "")
	return j
}

// topLevelDomain reports whether tld can end an e-mail domain: letters
// only (or punycode), and not a file extension ("icon@2x.png").
func topLevelDomain(tld string) bool {
	if strings.HasPrefix(tld, "xn--") {
		return len(tld) > 4
	}
	if len(tld) < 2 || len(tld) > 24 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if !isAlpha(tld[i]) {
			return false
		}
	}
	switch strings.ToLower(tld) {
	case "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "pdf", "txt",
		"log", "json", "yaml", "yml", "js", "ts", "tsx", "jsx", "html", "htm",
		"css", "scss", "csv", "tar", "gz", "tgz", "lock", "toml", "ini", "cfg",
		"conf", "exe", "dll", "so", "wasm", "md5", "sha", "sig":
		return false
	}
	return true
}

// hasContext reports whether one of words (lower case) appears shortly
// before s[i], and after any token there, so that a token naming a kind
// is not read as context.
func (sc *scanner) hasContext(i int, words []string) bool {
	w := sc.s[max(0, i-48):i]
	if k := strings.LastIndexByte(w, ']'); k >= 0 {
		w = w[k+1:]
	}
	for _, kw := range words {
		if containsFold(w, kw) {
			return true
		}
	}
	return false
}

// hasContextAfter reports whether one of words (lower case) appears
// shortly after s[i], on the same line and before any token there: "gave
// 123456789 as their social".
func (sc *scanner) hasContextAfter(i int, words []string) bool {
	w := sc.s[i:min(len(sc.s), i+32)]
	if k := strings.IndexAny(w, "[\n"); k >= 0 {
		w = w[:k]
	}
	for _, kw := range words {
		if containsFold(w, kw) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains needle, comparing ASCII letters
// without case; needle is lower case.
func containsFold(s, needle string) bool { return indexFold(s, needle) >= 0 }
