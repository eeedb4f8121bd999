package redact

import (
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Unicode folding. The detectors read ASCII: digits, '@', '+', '-', spaces.
// A value written with look-alike characters — a card grouped with
// U+00A0 or U+202F, full-width digits "４１１１", a full-width '＠', a
// phone number with U+2011 non-breaking hyphens, or a zero-width space
// between digits — would pass them by. So text with non-ASCII characters
// is folded first, and the detectors run on the folded copy:
//
//   - every character whose NFKC form (golang.org/x/text/unicode/norm) is
//     ASCII becomes that form: full-width and half-width forms, circled
//     and super-/subscript digits, ligatures, mathematical letters, the
//     fraction slash family excepted (their NFKC form is not ASCII);
//   - Unicode spaces (Zs, such as U+00A0, U+2007, U+202F, U+3000) become
//     ' ', and tabs and line breaks are already ASCII;
//   - Unicode dashes and minus signs (U+2010–U+2015, U+2212, U+FE58,
//     U+FE63, U+FF0D) become '-';
//   - invisible format characters (U+00AD soft hyphen, U+200B–U+200D,
//     U+2060, U+FEFF) are dropped;
//   - the underscores of Markdown emphasis ("_4111 1111 1111 1111_",
//     "__jo@example.com__") become ' ': to the detectors an underscore
//     is a byte of a word (snake_case), so a value in emphasis would read
//     as part of an identifier and be left alone.
//
// Other characters (letters with accents, CJK, ...) are kept as they are.
// A folded text keeps, for every byte, the offset in the original text of
// the character it came from, so a match in the folded text replaces the
// original characters, and the token is computed from the folded value:
// "４１１１ １１１１ …" and "4111 1111 …" get one token.

// folded is a text folded for the detectors, with its offsets into the
// original.
type folded struct {
	s   string
	seg []fseg // where each run of folded bytes came from, in order
	n   int    // length of the original
}

// An fseg is a run of folded bytes from f on, up to the next fseg.
type fseg struct {
	f, o int32 // where the run starts in the folded text and in the original
	kind uint8
}

// Kinds of fseg.
const (
	segSame  uint8 = iota // byte i of the run is byte i of the original run
	segChars              // copied characters: each byte comes from the start of its character
	segFold               // the folding of the one character at o
)

// fold returns the folded form of s, or ok false when folding would change
// nothing (the common case: ASCII text, or text whose non-ASCII
// characters all stay).
func fold(s string) (f folded, ok bool) {
	// Find the first character that folds; text before it is copied.
	first := -1
	for j := 0; j < len(s); {
		if s[j] < utf8.RuneSelf {
			if s[j] == '_' && emphasis(s, j) {
				first = j
				break
			}
			j++
			continue
		}
		_, size, changes := foldRune(s[j:])
		if changes {
			first = j
			break
		}
		j += size
	}
	if first < 0 {
		return folded{}, false
	}
	b := make([]byte, 0, len(s))
	var seg []fseg
	if first > 0 {
		seg = append(seg, fseg{0, 0, segSame})
	}
	b = append(b, s[:first]...)
	copying := false // the last fseg is a segChars run that ends where b does
	for j := first; j < len(s); {
		if s[j] < utf8.RuneSelf {
			if s[j] == '_' && emphasis(s, j) {
				seg = append(seg, fseg{int32(len(b)), int32(j), segFold})
				b = append(b, ' ')
				copying = false
				j++
				continue
			}
			if !copying {
				seg = append(seg, fseg{int32(len(b)), int32(j), segChars})
				copying = true
			}
			b = append(b, s[j])
			j++
			continue
		}
		rep, size, changes := foldRune(s[j:])
		if !changes {
			if !copying {
				seg = append(seg, fseg{int32(len(b)), int32(j), segChars})
				copying = true
			}
			b = append(b, s[j:j+size]...)
			j += size
			continue
		}
		if rep != "" {
			seg = append(seg, fseg{int32(len(b)), int32(j), segFold})
			b = append(b, rep...)
		}
		copying = false
		j += size
	}
	return folded{s: string(b), seg: seg, n: len(s)}, true
}

// emphasis reports whether the '_' at s[i] is in one or two underscores
// of Markdown emphasis: opening a word (after the start, a space or
// punctuation, or a "\n" escape, before a letter or digit) or closing one
// (after a letter or digit, before the end, a space or punctuation).
// Underscores inside a word (user_id_4111), next to a byte that joins a
// key or a path ('-', '+', '/', '=', '@', '%', '&', '~'; '.' before an
// opening one: wk_a-_b, v1._x) or in longer runs (____) stay.
func emphasis(s string, i int) bool {
	a, b := i, i+1
	for a > 0 && s[a-1] == '_' {
		a--
	}
	for b < len(s) && s[b] == '_' {
		b++
	}
	if b-a > 2 {
		return false
	}
	opens := (a == 0 || edge(s[a-1]) && s[a-1] != '.' ||
		a >= 2 && s[a-2] == '\\' && (s[a-1] == 'n' || s[a-1] == 't' || s[a-1] == 'r')) &&
		b < len(s) && isAlnum(s[b])
	closes := a > 0 && isAlnum(s[a-1]) && (b == len(s) || edge(s[b]) || s[b] == '\\') && !snakeTail(s, a)
	return opens || closes
}

// snakeTail reports whether the word that ends at s[a] has an underscore
// inside it and does not open with one: the underscore after it ends a
// key or an identifier ("wk_m1xN26wgKEE_;", "user_id_"), not emphasis
// ("_4242_4242_4242_4242_" is). Only a closing underscore asks, and there
// is at most one of those per word.
func snakeTail(s string, a int) bool {
	inner := false
	k := a - 1
	for ; k >= 0 && (isWord(s[k]) || s[k] == '-'); k-- {
		if s[k] == '_' {
			inner = true
		}
	}
	if !inner {
		return false
	}
	// The underscores the word starts with open it, and are not inside.
	start := k + 1
	return s[start] != '_'
}

// edge reports whether c may stand next to emphasis: not a byte of a word
// or one that joins a key or path.
func edge(c byte) bool {
	return !isWord(c) && strings.IndexByte("-+/=@%&~\\", c) < 0
}

// offset returns the offset in the original of the character folded byte
// i (< len(f.s)) came from.
func (f *folded) offset(i int) int {
	k, found := slices.BinarySearchFunc(f.seg, int32(i), func(g fseg, i int32) int { return int(g.f - i) })
	if !found {
		k--
	}
	g := f.seg[k]
	switch g.kind {
	case segSame:
		return int(g.o) + i - int(g.f)
	case segFold:
		return int(g.o)
	}
	// The start of the character byte i is in, when it is whole.
	c := i
	for c > int(g.f) && i-c < 3 && f.s[c]&0xC0 == 0x80 {
		c--
	}
	if c < i {
		if _, size := utf8.DecodeRuneInString(f.s[c:]); size == 1 || c+size <= i {
			c = i
		}
	}
	return int(g.o) + c - int(g.f)
}

// foldRune returns what the character at the start of s (non-ASCII)
// folds to, its size, and whether folding changes it.
func foldRune(s string) (rep string, size int, changes bool) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return "", size, false
	}
	switch r {
	case 0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF:
		return "", size, true
	case 0x00A0, 0x1680, 0x202F, 0x205F, 0x3000:
		return " ", size, true
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D:
		return "-", size, true
	}
	if 0x2000 <= r && r <= 0x200A {
		return " ", size, true
	}
	if 0xFF01 <= r && r <= 0xFF5E { // full-width ASCII
		return string(rune(r - 0xFEE0)), size, true
	}
	// Common letters (Latin-1 and Latin Extended letters, CJK, Hangul,
	// kana) have no ASCII compatibility form: skip the table lookup.
	if 0xC0 <= r && r < 0x2000 || 0x3040 <= r && r < 0xFF00 && !(0x3200 <= r && r < 0x3400) {
		return "", size, false
	}
	d := norm.NFKC.PropertiesString(s).Decomposition()
	if len(d) == 0 {
		return "", size, false
	}
	for _, c := range d {
		if c >= utf8.RuneSelf {
			return "", size, false
		}
	}
	return string(d), size, true
}

// start maps the start of a span in the folded text to the original.
func (f *folded) start(i int) int {
	if i >= len(f.s) {
		return f.n
	}
	return f.offset(i)
}

// end maps the end of a span in the folded text to the original: the end
// of the character the span's last byte came from.
func (f *folded) end(i int) int {
	if i >= len(f.s) {
		return f.n
	}
	if i == 0 {
		return 0
	}
	last := f.offset(i - 1)
	for j := i; j < len(f.s); j++ {
		if o := f.offset(j); o != last {
			return o
		}
	}
	return f.n
}
