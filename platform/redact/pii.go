package redact

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The detectors of personal data that has no fixed shape: people's names,
// postal addresses, dates of birth and identity-document numbers. They
// read words rather than bytes: the text is cut into words once, each word
// is looked up once in the lexicon (lexicon.go), and small rules decide
// from a word's neighbours:
//
//   - a date of birth is a date shortly after a cue (born, DOB, date of
//     birth, geboren, né le, fecha de nacimiento, ...);
//   - an identity number is a word of 6–20 letters and digits, at least
//     three of them digits, shortly after a cue (passport, Ausweis,
//     permis de conduire, DNI, ...);
//   - a street line is a house number and a street type (14 Harbour Road,
//     12 rue de la Paix, Hauptstraße 5, Calle Mayor 5); a postcode is a
//     UK postcode, a US ZIP code after a state code, or a European
//     postcode before a city (10115 Berlin: the postcode is redacted,
//     the city stays);
//   - a name is a run of capitalised words after a cue phrase or an
//     honorific (Dear, customer, my name is, signed, From:, Mr, Frau,
//     Mme, Sra), or starting with a given name from the gazetteer
//     (gazetteer.go), or, when neither decides, one the named-entity
//     model (ner.go) labels PERSON.

// A pword is one word of a text.
type pword struct {
	start, end int32
	gap        uint8  // what separates it from the word before
	shape      uint8  // wDigits, wAlpha, wAlnum
	upper      uint8  // first letter upper case (1), all letters upper case (2)
	flags      uint32 // lexicon flags, once looked up
	looked     bool   // flags is set
	used       bool   // inside a match already
	plain      bool   // ASCII, no hyphen: the lexicon pre-filter applies
	cue        uint8  // 0: not known yet; 1: not a date-of-birth or id cue; 2: one
	pre        uint32 // the flags the word may have (lexFilter), set when it is cut
}

// Gap bits: what lies between a word and the one before it.
const (
	gSpace   uint8 = 1 << iota // spaces or tabs
	gComma                     // ','
	gPeriod                    // '.', '!', '?' (a sentence may end)
	gNewline                   // a line break (also "\n" escaped in JSON)
	gColon                     // ':'
	gOther                     // other punctuation: quotes, brackets, '/', '=', ...
	gToken                     // a token ("[name:…]") or the start of the text
)

const (
	wAlpha = iota
	wDigits
	wAlnum
)

var wordPool = sync.Pool{New: func() any { s := make([]pword, 0, 256); return &s }}

// piiFind appends the names, addresses, dates of birth and identity
// numbers in s to dst, in no particular order; they may overlap.
func (r *Redactor) piiFind(dst []Match, s string) []Match {
	var digit, upper bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			digit = true
		} else if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			upper = true
		}
		if digit && upper {
			break
		}
	}
	if !digit && !upper && !lowerCue(s) {
		return dst
	}
	wp := wordPool.Get().(*[]pword)
	ws := words((*wp)[:0], s)
	p := piiScan{r: r, s: s, w: ws, m: dst}
	p.run(digit)
	*wp = ws[:0]
	wordPool.Put(wp)
	return p.m
}

// lowerCue reports whether text in lower case, without digits or capitals,
// may still hold a name after a cue or an e-mail address written out.
func lowerCue(s string) bool {
	if strings.IndexByte(s, '@') >= 0 {
		return true
	}
	for _, c := range []string{" at ", "(at)", "[at]", "{at}", "<at>", "arroba", "arobase", "name", "dear", "hi ", "hello", "customer", "client", "regards", "signed", "thanks"} {
		if indexFold(s, c) >= 0 {
			return true
		}
	}
	return false
}

// words cuts s into words: letters, digits and marks, joined by inner
// apostrophes and hyphens (O'Sullivan, Müller-Lüdenscheidt, ORD-1001).
// Tokens already in the text are not words.
func words(dst []pword, s string) []pword {
	// Room for a word every six bytes, so that a long text is not
	// copied while its words grow the slice.
	if n := len(s)/6 + 16; cap(dst) < n {
		dst = make([]pword, 0, n)
	}
	gap := gToken
	for i := 0; i < len(s); {
		c := s[i]
		if c == '[' {
			if e := tokenEnd(s, i); e > 0 {
				gap |= gToken
				i = e
				continue
			}
		}
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n', 'r':
				gap |= gNewline
				i += 2
				continue
			case 't', '"', '\\', '/', 'b', 'f':
				gap |= gOther
				i += 2
				continue
			case 'u':
				// A \uXXXX escape is one separator; a "\u" without its
				// four hex digits is two (the letters after it are words:
				// `\u0; passport 123456789` keeps its cue).
				gap |= gOther
				if i+5 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]) {
					i += 6
				} else {
					i += 2
				}
				continue
			}
		}
		if c < utf8.RuneSelf {
			if !isWord(c) {
				switch c {
				case ' ', '\t':
					gap |= gSpace
				case ',':
					gap |= gComma
				case '.', '!', '?', ';':
					gap |= gPeriod
				case '\n', '\r':
					gap |= gNewline
				case ':':
					gap |= gColon
				default:
					gap |= gOther
				}
				i++
				continue
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !(unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)) {
				switch {
				case r == utf8.RuneError:
					gap |= gOther
				case unicode.IsSpace(r):
					gap |= gSpace
				case r == '。' || r == '！' || r == '？':
					gap |= gPeriod
				default:
					gap |= gOther
				}
				i += size
				continue
			}
		}
		// A word starts at i.
		w := pword{start: int32(i), gap: gap}
		gap = 0
		hasDigit, hasLetter, allDigit, plain := false, false, true, true
		first, allUpper, letters := true, true, 0
		script := 0 // of the last letter: 1 Latin and others, 2 CJK
		for i < len(s) {
			c := s[i]
			// ASCII letters and digits, most of any text, take the
			// short way.
			if cl := class[c]; cl&(clUpper|clLower) != 0 {
				if script == 2 {
					break
				}
				script = 1
				hasLetter, allDigit = true, false
				letters++
				if cl&clUpper != 0 {
					if first {
						w.upper = 1
					}
				} else {
					allUpper = false
				}
				first = false
				i++
				continue
			} else if cl&clDigit != 0 {
				hasDigit = true
				i++
				continue
			}
			var r rune
			size := 1
			if c < utf8.RuneSelf {
				r = rune(c)
			} else {
				r, size = utf8.DecodeRuneInString(s[i:])
			}
			// A change between CJK and other letters ends a word:
			// "Lauren商品" is a brand and a Chinese word.
			if c < utf8.RuneSelf && isAlpha(c) || c >= utf8.RuneSelf && unicode.IsLetter(r) {
				sc := 1
				if c >= utf8.RuneSelf && isCJK(r) {
					sc = 2
				}
				if script != 0 && sc != script {
					break
				}
				script = sc
			}
			switch {
			case c < utf8.RuneSelf && isDigit(c):
				hasDigit = true
			case c < utf8.RuneSelf && isAlpha(c):
				hasLetter, allDigit = true, false
				letters++
				up := c <= 'Z'
				if first && up {
					w.upper = 1
				}
				if !up {
					allUpper = false
				}
				first = false
			case c >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsMark(r)):
				hasLetter, allDigit, plain = true, false, false
				if unicode.IsMark(r) {
					break
				}
				letters++
				up := unicode.IsUpper(r)
				if first && up {
					w.upper = 1
				}
				if !up {
					allUpper = false
				}
				first = false
			case c >= utf8.RuneSelf && unicode.IsDigit(r):
				hasDigit, allDigit, plain = true, false, false
			case c == '_':
				allDigit = false
			case (c == '\'' || c == '-') && i+1 < len(s) && isWordStart(s[i+1:]):
				allDigit = allDigit && c == '-' && isDigit(s[i+1])
				plain = plain && c == '\''
			case r == '’' && i+size < len(s) && isWordStart(s[i+size:]):
				allDigit, plain = false, false
			default:
				goto end
			}
			i += size
		}
	end:
		w.end = int32(i)
		switch {
		case allDigit && hasDigit:
			w.shape = wDigits
		case hasDigit:
			w.shape = wAlnum
		default:
			w.shape = wAlpha
		}
		if hasLetter && allUpper && letters > 1 {
			w.upper = 2
		}
		w.plain = plain
		if w.shape == wAlpha {
			w.pre = ^uint32(0)
			if key, ok := lexKey(s[w.start:w.end]); ok && plain {
				w.pre = lexFilter[key]
			}
		}
		dst = append(dst, w)
	}
	return dst
}

// isCJK reports whether r is a Han, kana or Hangul character.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r) || r == 'ー'
}

// isWordStart reports whether s starts with a letter or digit.
func isWordStart(s string) bool {
	if s[0] < utf8.RuneSelf {
		return isAlnum(s[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// lookupWord returns the lexicon flags of w, compared in lower case; a
// hyphenated word also has the cue flags of its first part
// (Reisepass-Nr, Personalausweis-Nummer).
func lookupWord(w string) uint32 {
	if len(w) > 32 {
		return 0
	}
	var buf [64]byte
	b := buf[:0]
	for _, r := range w {
		if r < utf8.RuneSelf {
			b = append(b, lowerASCII(byte(r)))
		} else {
			if r == '’' {
				r = '\''
			}
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
	}
	f := lexicon[string(b)]
	if k := strings.IndexByte(string(b), '-'); k > 0 {
		f |= lexicon[string(b[:k])] & (lxID | lxDOB | lxPostcue | lxCue)
	}
	return f
}

// A piiScan finds values in one text.
type piiScan struct {
	r   *Redactor
	s   string
	w   []pword
	m   []Match
	ner [][2]int
}

func (p *piiScan) text(k int) string { return p.s[p.w[k].start:p.w[k].end] }

// fl returns the lexicon flags of word k, looking them up the first time:
// most words are never asked about, and the pre-filter rules most of the
// others out without a look-up.
func (p *piiScan) fl(k int) uint32 {
	w := &p.w[k]
	if !w.looked {
		w.looked = true
		if w.pre != 0 {
			w.flags = lookupWord(p.s[w.start:w.end])
		}
	}
	return w.flags
}

// has reports whether word k has one of the lexicon flags in mask,
// without looking it up when the pre-filter tells it has none.
func (p *piiScan) has(k int, mask uint32) bool {
	w := &p.w[k]
	if w.looked {
		return w.flags&mask != 0
	}
	if w.pre&mask == 0 {
		return false
	}
	return p.fl(k)&mask != 0
}

func (p *piiScan) add(from, to int, kind string, start, end int) {
	p.m = append(p.m, Match{Start: start, End: end, Kind: kind})
	for k := from; k < to; k++ {
		p.w[k].used = true
	}
}

func (p *piiScan) run(digit bool) {
	if len(p.w) == 0 {
		return
	}
	if digit {
		for k := range p.w {
			if p.w[k].used || p.w[k].shape == wAlpha {
				continue
			}
			// A number: a cue a few words before makes it a date of
			// birth or an identity number; otherwise it may be part of
			// an address.
			if c := p.cueBefore(k); c >= 0 {
				if p.has(c, lxDOB) || p.dottedDOB(c) {
					p.dob(c)
				} else {
					p.idNumber(c)
				}
			}
			if !p.w[k].used {
				p.dobAfter(k)
			}
			if !p.w[k].used {
				p.address(k)
			}
		}
	}
	for k := 1; k < len(p.w); k++ {
		if p.w[k].used {
			continue
		}
		if n := p.w[k].end - p.w[k].start; k+1 < len(p.w) && n >= 2 && n <= 11 && atWord(p.text(k)) {
			if p.spelledGap(k) {
				p.spelledEmail(k-1, k+1, p.bracketedAt(k), false)
			}
		} else if p.w[k].gap&gOther != 0 && p.w[k].gap&^(gSpace|gOther) == 0 && p.atSign(k) {
			p.spelledEmail(k-1, k, true, true)
		}
	}
	p.keepWords()
	for k := 0; k < len(p.w); {
		k = p.name(k)
	}
	if len(p.ner) > 0 && !p.r.noNER {
		p.runNER()
	}
}

// next calls f with the words after k, up to eight words and 48 bytes on,
// on the same line, until f returns false.
func (p *piiScan) next(k int, f func(j int) bool) {
	limit := p.w[k].end + 48
	for j := k + 1; j < len(p.w) && j <= k+8 && p.w[j].start <= limit; j++ {
		if p.w[j].gap&(gNewline|gToken) != 0 {
			return
		}
		if !f(j) {
			return
		}
	}
}

// cueBefore returns the nearest date-of-birth or identity-document cue
// before word k, on its line and at most eight words and 48 bytes back,
// or -1.
func (p *piiScan) cueBefore(k int) int {
	for j := k - 1; j >= 0 && j >= k-8 && p.w[j].end+48 >= p.w[k].start; j-- {
		if p.w[j].cue == 0 {
			p.w[j].cue = 1
			if p.has(j, lxDOB|lxID) || p.idPhrase(j) || p.dottedDOB(j) {
				p.w[j].cue = 2
			}
		}
		if p.w[j].cue == 2 {
			return j
		}
		if p.w[j].gap&(gNewline|gToken) != 0 {
			break
		}
	}
	return -1
}

// dob redacts the first date within a few words after the cue at k.
func (p *piiScan) dob(k int) {
	p.next(k, func(j int) bool {
		if p.w[j].used {
			return false
		}
		if end, ok := parseDate(p.s, int(p.w[j].start)); ok {
			last := j
			for last+1 < len(p.w) && p.w[last+1].start < int32(end) {
				last++
			}
			p.add(j, last+1, KindDOB, int(p.w[j].start), end)
			return false
		}
		return true
	})
}

// dottedDOB reports whether word k is the "b" of "d.o.b" (D.O.B.: 12/05/1980,
// D. O. B. 12/05/1980):
// words are cut at periods, so the lexicon's "d.o.b" is never one word.
func (p *piiScan) dottedDOB(k int) bool {
	if k < 2 || !dotGap(p.w[k].gap) || !dotGap(p.w[k-1].gap) {
		return false
	}
	return strings.EqualFold(p.text(k), "b") && strings.EqualFold(p.text(k-1), "o") && strings.EqualFold(p.text(k-2), "d")
}

// dobInitial reports whether word j is the "D" of "D.O.B", which reads
// like a name's initial after a cue ("Patient D.O.B 12/05/1980").
func (p *piiScan) dobInitial(j int) bool {
	return j+2 < len(p.w) && p.w[j].end-p.w[j].start == 1 && p.dottedDOB(j+2)
}

// dotGap reports a period, with spaces after it or not: "D.O.B", "D. O. B.".
func dotGap(g uint8) bool { return g == gPeriod || g == gPeriod|gSpace }

// idPhrase reports whether the words at k are a two-word cue for an
// identity number: "ID card", "national ID", "tax ID".
func (p *piiScan) idPhrase(k int) bool {
	if k+1 >= len(p.w) || p.w[k].shape != wAlpha || !p.has(k, lxIDWord1) || !p.has(k+1, lxIDWord2) {
		return false
	}
	return !strings.EqualFold(p.text(k), "id") || !strings.EqualFold(p.text(k+1), "number")
}

// idNumber redacts the identity number within a few words after the cue
// at k.
func (p *piiScan) idNumber(k int) {
	p.next(k, func(j int) bool {
		if p.w[j].used {
			return false
		}
		w := p.w[j]
		if w.shape == wAlpha {
			if p.has(j, lxIDFiller|lxID) || len(p.text(j)) <= 2 && w.upper == 0 {
				return true
			}
			// A number may start with letters written apart ("AB 123456").
			if w.upper == 2 && w.end-w.start <= 3 && j+1 < len(p.w) && p.w[j+1].shape == wDigits && p.w[j+1].gap == gSpace {
				if end, ok := p.idValue(j + 1); ok {
					p.add(j, j+2, KindID, int(w.start), end)
					return false
				}
			}
			return false
		}
		if _, ok := parseDate(p.s, int(w.start)); ok {
			return true
		}
		if end, ok := p.idValue(j); ok {
			last := j
			for last+1 < len(p.w) && p.w[last+1].start < int32(end) {
				last++
			}
			p.add(j, last+1, KindID, int(w.start), end)
		}
		return false
	})
}

// idValue reports the end of an identity number starting at word j: 6–20
// ASCII letters and digits, at least three digits, optionally in groups
// separated by single spaces or hyphens ("12 345 678 901").
func (p *piiScan) idValue(j int) (int, bool) {
	s := p.s
	i := int(p.w[j].start)
	n, digits, end := 0, 0, i
	for i < len(s) && n <= 20 {
		c := s[i]
		switch {
		case isAlnum(c):
			n++
			if isDigit(c) {
				digits++
			}
			i++
			end = i
			continue
		case (c == ' ' || c == '-') && i+1 < len(s) && isDigit(s[i+1]) && end == i:
			i++
			continue
		}
		break
	}
	if n < 6 || n > 20 || digits < 3 && (digits < 2 || n < 8) || end < len(s) && (s[end] >= utf8.RuneSelf || isWord(s[end])) {
		return 0, false
	}
	return end, true
}

// address looks for a street line or a postcode at word k, which holds a
// digit.
func (p *piiScan) address(k int) {
	w := p.w[k]
	t := p.text(k)
	if w.start > 0 && strings.IndexByte("/=_-.#@:+&%$", p.s[w.start-1]) >= 0 {
		return // glued to something: a path, a key=value, an id, an amount
	}
	if p.streetCueNumber(k) || p.ukPostcode(k) || p.alnumPostcode(k) {
		return
	}
	if houseNumber(t) {
		if p.streetAfter(k) || p.streetBefore(k) {
			return
		}
	}
	if p.blockNumber(k) || p.worldPostcode(k) {
		return
	}
	if w.shape == wDigits && len(t) == 5 || zipPlus4(t) {
		// US: "Springfield, IL 62704".
		if k >= 2 && p.w[k-1].upper == 2 && p.has(k-1, lxUSState) && p.w[k-1].gap&gComma != 0 && p.w[k].gap == gSpace {
			p.add(k, k+1, KindAddress, int(w.start), int(w.end))
			return
		}
	}
	if w.shape == wDigits && (len(t) == 4 || len(t) == 5) {
		p.euPostcode(k)
	}
}

func zipPlus4(t string) bool {
	if len(t) != 10 || t[5] != '-' {
		return false
	}
	for i := 0; i < 10; i++ {
		if i != 5 && !isDigit(t[i]) {
			return false
		}
	}
	return true
}

// houseNumber reports whether t can be a house number: 1–4 digits, not
// starting with 0, optionally a letter (221B, 12a) or a range (12-14).
func houseNumber(t string) bool {
	i := 0
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	if i == 0 || i > 4 || t[0] == '0' {
		return false
	}
	rest := t[i:]
	switch {
	case rest == "":
		return true
	case len(rest) == 1 && isAlpha(rest[0]):
		return true
	case rest[0] == '-' && len(rest) <= 5:
		for j := 1; j < len(rest); j++ {
			if !isDigit(rest[j]) {
				return false
			}
		}
		return len(rest) > 1
	}
	return false
}

// nameLike reports whether word j can be part of a street or person's
// name: letters, starting with a capital, not all capitals unless short.
func (p *piiScan) nameLike(j int) bool {
	w := p.w[j]
	return w.shape == wAlpha && w.upper == 1
}

// streetAfter: a house number followed by a street ("14 Harbour Road",
// "221B Baker St", "12 rue de la Paix", "5, Avenida de Mayo").
func (p *piiScan) streetAfter(k int) bool {
	j := k + 1
	if j >= len(p.w) || p.w[j].gap&^(gSpace|gComma) != 0 || p.w[j].used {
		return false
	}
	if p.has(j, lxStreetFR) && p.w[j].shape == wAlpha {
		// Type first: the name follows.
		last := -1
		for n := j + 1; n < len(p.w) && n <= j+6 && p.w[n].gap&^gSpace == 0 && !p.w[n].used; n++ {
			if p.nameLike(n) {
				last = n
				continue
			}
			if p.has(n, lxParticle) || p.elided(n) {
				continue
			}
			break
		}
		if last > 0 {
			p.add(k, last+1, KindAddress, int(p.w[k].start), int(p.w[last].end))
			return true
		}
		return false
	}
	names := 0
	for n := j; n < len(p.w) && n <= j+5 && (n == j || p.w[n].gap&^gSpace == 0) && !p.w[n].used; n++ {
		w := p.w[n]
		if p.has(n, lxStreetEN) && w.upper == 1 && names > 0 {
			last, end := n, int(w.end)
			if end < len(p.s) && p.s[end] == '.' {
				end++
			}
			// A direction after the street type: "Pennsylvania Avenue NW".
			if n+1 < len(p.w) && p.w[n+1].gap == gSpace && direction(p.text(n+1)) {
				last, end = n+1, int(p.w[n+1].end)
			}
			p.add(k, last+1, KindAddress, int(p.w[k].start), end)
			return true
		}
		if p.nameLike(n) || names > 0 && p.has(n, lxParticle) || w.upper == 2 && w.shape == wAlpha && w.end-w.start <= 3 {
			names++
			continue
		}
		break
	}
	return false
}

// elided reports whether word n is an elided particle: d'Alembert, l'Église.
func (p *piiScan) elided(n int) bool {
	t := p.text(n)
	return len(t) > 2 && (t[0] == 'd' || t[0] == 'l') && (t[1] == '\'' || strings.HasPrefix(t[1:], "’"))
}

func direction(t string) bool {
	switch t {
	case "N", "S", "E", "W", "NE", "NW", "SE", "SW":
		return true
	}
	return false
}

// streetBefore: a street followed by its house number ("Hauptstraße 5",
// "Berliner Straße 12", "Calle Mayor, 5", "Via Roma 12").
func (p *piiScan) streetBefore(k int) bool {
	if k == 0 {
		return false
	}
	j := k - 1
	abbrev := p.w[k].gap == gPeriod|gSpace && strings.HasSuffix(strings.ToLower(p.text(j)), "str")
	if p.w[k].gap&^(gSpace|gComma) != 0 && !abbrev {
		return false
	}
	if p.w[j].used || p.w[j].shape != wAlpha {
		return false
	}
	t := strings.ToLower(p.text(j))
	if p.w[j].upper == 1 && germanStreet(t) {
		from := j
		if p.has(j, lxStreetDE) { // "Berliner Straße": take the name before
			for n := j - 1; n >= 0 && n >= j-2 && p.w[n+1].gap == gSpace && !p.w[n].used && (p.nameLike(n) || p.has(n, lxParticle)); n-- {
				from = n
			}
			if from == j {
				return false
			}
		}
		p.add(from, k+1, KindAddress, int(p.w[from].start), int(p.w[k].end))
		return true
	}
	// A street type up to five words back, with only names between.
	for n := j; n >= 0 && n >= j-5 && !p.w[n].used; n-- {
		w := p.w[n]
		abbrev := int(w.end) < len(p.s) && p.s[w.end] == '.'
		if p.has(n, lxStreetFR) && (w.upper == 1 || abbrev) && n < j {
			p.add(n, k+1, KindAddress, int(w.start), int(p.w[k].end))
			return true
		}
		if n < j && p.w[n+1].gap == gPeriod|gSpace && abbrev && p.has(n, lxStreetFR) {
			continue
		}
		if !(p.nameLike(n) || p.has(n, lxParticle) || p.elided(n) || w.upper == 2 && w.shape == wAlpha && w.end-w.start <= 4) ||
			n < j && p.w[n+1].gap != gSpace {
			return false
		}
	}
	return false
}

// germanStreet reports whether t (lower case) is a German street name:
// one ending in -straße, -strasse, -str, -weg, -platz, -allee, -gasse,
// -damm, -ufer, or one of those words on its own.
func germanStreet(t string) bool {
	for _, suf := range []string{"straße", "strasse", "str", "weg", "platz", "allee", "gasse", "damm", "ufer", "chaussee"} {
		if strings.HasSuffix(t, suf) {
			return true
		}
	}
	// Dutch, Swedish, Danish and Norwegian street names are one word too:
	// Keizersgracht, Kalverstraat, Drottninggatan, Kungsvägen, Vesterbrogade.
	for _, suf := range []string{"gracht", "straat", "laan", "kade", "plein", "singel", "gatan", "vägen", "vagen", "gränd",
		"torget", "gade", "vej", "veien", "gata", "gaten", "rak"} {
		if len(t) >= len(suf)+3 && strings.HasSuffix(t, suf) {
			return true
		}
	}
	return false
}

// ukPostcode redacts a UK postcode starting at word k: "BS3 4QA",
// "SW1A 1AA", "M1 1AE".
func (p *piiScan) ukPostcode(k int) bool {
	if k+1 >= len(p.w) || p.w[k].shape != wAlnum || p.w[k+1].gap != gSpace {
		return false
	}
	out, in := p.text(k), p.text(k+1)
	if !ukOutward(out) || len(in) != 3 || !isDigit(in[0]) || !ukInward(in[1]) || !ukInward(in[2]) {
		return false
	}
	if e := int(p.w[k+1].end); e < len(p.s) && (isWord(p.s[e]) || p.s[e] == '-') {
		return false
	}
	p.add(k, k+2, KindAddress, int(p.w[k].start), int(p.w[k+1].end))
	return true
}

// ukOutward: A9, A99, A9A, AA9, AA99, AA9A.
func ukOutward(t string) bool {
	if len(t) < 2 || len(t) > 4 || !isUpperASCII(t[0]) || strings.IndexByte("QVX", t[0]) >= 0 {
		return false
	}
	i := 1
	if isUpperASCII(t[1]) {
		i = 2
	}
	if i >= len(t) || !isDigit(t[i]) {
		return false
	}
	i++
	if i == len(t) {
		return true
	}
	if i == len(t)-1 && (isDigit(t[i]) || isUpperASCII(t[i])) {
		return true
	}
	return false
}

func ukInward(c byte) bool { return isUpperASCII(c) && strings.IndexByte("CIKMOV", c) < 0 }

func isUpperASCII(c byte) bool { return 'A' <= c && c <= 'Z' }

// euPostcode redacts a 4- or 5-digit postcode before a city ("10115
// Berlin", "75001 Paris", "1010 Wien", "1012 AB Amsterdam") or after a
// postcode cue ("PLZ 10115"). The city stays.
func (p *piiScan) euPostcode(k int) {
	w := p.w[k]
	if k > 0 && p.has(k-1, lxPostcue) {
		p.add(k, k+1, KindAddress, int(w.start), int(w.end))
		return
	}
	j := k + 1
	if j >= len(p.w) || p.w[j].gap != gSpace || p.w[j].used {
		return
	}
	end := int(w.end)
	// Dutch: "1012 AB Amsterdam".
	if t := p.text(j); len(p.text(k)) == 4 && len(t) == 2 && p.w[j].upper == 2 && j+1 < len(p.w) && p.w[j+1].gap == gSpace && p.cityLike(j+1) {
		p.add(k, j+1, KindAddress, int(w.start), int(p.w[j].end))
		return
	}
	if !p.cityLike(j) {
		return
	}
	// Four digits are a year as often as a postcode: only after a street
	// line or a comma ("Ringstraße 1, 1010 Wien").
	if len(p.text(k)) == 4 && !(k > 0 && (p.w[k-1].used || w.gap&gComma != 0 || w.gap&gNewline != 0)) {
		return
	}
	p.add(k, k+1, KindAddress, int(w.start), end)
}

// cityLike reports whether word j can be a city name.
func (p *piiScan) cityLike(j int) bool {
	w := p.w[j]
	return w.shape == wAlpha && w.upper == 1 && !p.has(j, lxStop|lxMonth|lxCompany) && !unitWord(p.text(j))
}

// unitWord: capitalised words that follow numbers and are not places.
func unitWord(t string) bool {
	switch strings.ToLower(t) {
	case "items", "units", "pieces", "stück", "stueck", "euro", "euros", "dollar", "dollars", "pounds", "pfund",
		"mal", "fälle", "fällen", "faelle", "kunden", "bestellungen", "artikel", "pakete", "seiten", "zeilen",
		"requests", "users", "calls", "tokens", "bytes", "records", "rows", "points", "punkte", "meter",
		"kilometer", "km", "kg", "mb", "gb", "ms", "sek", "min":
		return true
	}
	return false
}

// Names.

// isNameWord reports whether word j can be part of a person's name.
func (p *piiScan) isNameWord(j int) bool {
	w := p.w[j]
	if w.shape != wAlpha || p.w[j].used || p.dobInitial(j) {
		return false
	}
	if p.isInitial(j) {
		return true
	}
	if w.upper == 1 {
		return !p.has(j, lxStop|lxMonth|lxCompany|lxTitle|lxCue|lxID|lxDOB|lxIDFiller)
	}
	if w.upper == 2 && w.end-w.start == 1 { // an initial: "John F. Kennedy"
		return int(w.end) < len(p.s) && p.s[w.end] == '.'
	}
	// al-Rashid, d'Artagnan, bin-Laden style: a lower-case particle
	// joined to a capitalised name.
	t := p.text(j)
	k := 1
	for k < len(t) && k < 4 && t[k] != '\'' && t[k] != '-' && t[k] != 0xE2 {
		k++
	}
	if k < len(t) && k < 4 && (t[k] != 0xE2 || strings.HasPrefix(t[k:], "’")) {
		rest := t[k+1:]
		if strings.HasPrefix(t[k:], "’") {
			rest = t[k+3:]
		}
		r, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsUpper(r)
	}
	return false
}

// name looks for a person's name starting at word k and returns the word
// to go on from.
func (p *piiScan) name(k int) int {
	w := p.w[k]
	if j := p.commonGivenName(k); j >= 0 {
		last := j
		for n := j + 1; n < len(p.w) && n <= j+2 && p.w[n].gap == gSpace && p.isNameWord(n); n++ {
			last = n
		}
		p.add(k, last+1, KindName, int(w.start), int(p.w[last].end))
		return last + 1
	}
	if e := p.lowerName(k); e >= 0 {
		return e
	}
	if e := p.capsName(k); e >= 0 {
		return e
	}
	if e := p.arabicName(k); e >= 0 {
		return e
	}
	switch {
	case w.used:
		return k + 1
	case w.upper == 1 && p.isNameWord(k):
	case w.upper == 0 && (p.has(k, lxParticle) || p.isNameWord(k)) && p.cued(k):
		// A surname that starts with a particle, after an honorific or a
		// cue: "Mr van der Berg", "Sra. dos Santos", "Mr al-Sayed".
	default:
		return k + 1
	}
	// The run of name words, with particles between them.
	last := k
	for j := k + 1; j < len(p.w) && j <= k+6; j++ {
		if p.w[j].gap&^gSpace != 0 && !(p.w[j].gap == gPeriod|gSpace && p.isInitial(j-1)) {
			break
		}
		if p.isNameWord(j) || !p.w[k].plain && p.w[j].upper == 1 && !p.w[j].used && p.has(j, lxGiven) {
			// A name that starts with an accented word may go on with a
			// given name that is also a word elsewhere ("Trần Thị Mai",
			// "Đặng Thu Trang").
			last = j
			continue
		}
		if p.has(j, lxParticle) && p.w[j].upper == 0 && j+1 < len(p.w) && p.w[j+1].gap == gSpace {
			continue
		}
		break
	}
	if !p.isNameWord(last) {
		return last + 1
	}
	next := last + 1
	// One letter that is not an initial is no name: "Name: N/A".
	if last == k && p.w[k].end-p.w[k].start == 1 && !p.isInitial(k) {
		return next
	}
	// A company word right after: "Acme Logistics", "Northwind Traders Ltd".
	if next < len(p.w) && p.w[next].gap&^gSpace == 0 && p.has(next, lxCompany) {
		return next
	}
	start := int(p.w[k].start)
	end := int(p.w[last].end)
	switch {
	case p.cued(k):
		p.add(k, next, KindName, start, end)
	case last > k && p.givenAt(k, last) >= 0:
		g := p.givenAt(k, last)
		p.add(g, next, KindName, int(p.w[g].start), end)
	case last > k:
		p.ner = append(p.ner, [2]int{k, last})
	}
	return next
}

func (p *piiScan) isInitial(j int) bool {
	w := p.w[j]
	return w.upper != 0 && w.end-w.start == 1 && int(w.end) < len(p.s) && p.s[w.end] == '.'
}

// givenAt returns the first word of k..last-1 that is a given name, or -1.
func (p *piiScan) givenAt(k, last int) int {
	for j := k; j < last; j++ {
		if p.has(j, lxGiven) && p.w[j].upper == 1 {
			return j
		}
	}
	return -1
}

// cued reports whether the words before k introduce a name: an honorific
// ("Mr", "Frau", "Mme"), a greeting or sign-off ("Dear", "Hi", "regards,"),
// or a cue phrase ("customer", "my name is", "signed by", "From:").
func (p *piiScan) cued(k int) bool {
	j := k - 1
	if j < 0 || p.w[k].gap&(gToken|gOther) != 0 {
		return false
	}
	colon := p.w[k].gap&gColon != 0
	// Words that may stand between a cue and the name.
	for n := 0; n < 2 && j >= 0; n++ {
		switch strings.ToLower(p.text(j)) {
		case "is", "was", "ist", "war", "est", "es", "by", "von", "par", "por", "è", "e", "am", "bin", "suis", "soy", "me", "heißt", "heisst":
			if p.w[j+1].gap&gColon != 0 {
				colon = true
			}
			j--
			continue
		}
		break
	}
	if j < 0 {
		return false
	}
	w := p.w[j]
	if p.has(j, lxTitle) {
		return p.w[j+1].gap&^(gSpace|gPeriod) == 0
	}
	if !p.has(j, lxCue) || w.shape != wAlpha {
		return false
	}
	switch strings.ToLower(p.text(j)) {
	case "from", "name", "nom", "nombre", "nome", "contact", "attention", "signed", "sign":
		// "From: Anna", "Name: Anna", "my name is Anna", "signed by", but
		// not "shipping from Berlin".
		return colon || j+1 < k || p.w[j+1].gap&gColon != 0
	}
	return true
}

// maxNER bounds the model's calls for one text: 16, and one more for each
// KB of text, so that hostile text (thousands of capitalised word pairs)
// cannot make a log call take long, while real text, which has one
// undecided run in tens of KB, never reaches it. Runs past the bound are
// decided by cues and the gazetteer only.
func maxNER(n int) int { return 16 + n/1024 }

// runNER asks the named-entity model about the runs of capitalised words
// the cheaper layers could not decide, each with a few words of context.
func (p *piiScan) runNER() {
	limit := maxNER(len(p.s))
	for i, c := range p.ner {
		if i == limit {
			return
		}
		from, to := c[0], c[1]
		// One word either side: the model costs about 9 µs a word.
		a := from
		if a > 0 && p.w[a].gap&(gNewline|gToken) == 0 {
			a--
		}
		b := to
		if b+1 < len(p.w) && p.w[b+1].gap&(gNewline|gToken) == 0 {
			b++
		}
		window := p.s[p.w[a].start:p.w[b].end]
		if b == to {
			// Nothing after the run on its line: prose's chunker ends an
			// entity only at a token after it, so give it one.
			window += " ."
		}
		meter.add(len(window))
		found := false
		personWords(window, func(w string) {
			for j := from; j <= to && !found; j++ {
				found = w == p.text(j)
			}
		})
		if !found {
			continue
		}
		// One word of a run the model found: the whole run is the name
		// ("Maria van der Berg", of which the model marks "Berg").
		p.add(from, to+1, KindName, int(p.w[from].start), int(p.w[to].end))
	}
}
