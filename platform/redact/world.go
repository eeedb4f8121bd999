package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Word-level detectors added for personal data from more countries and
// scripts (issue 28): e-mail addresses written out, dates of birth with the
// cue after them, names in lower case after a cue, names that are also
// common words ("Will Page"), Arabic names, and street lines and postcodes
// of more countries. cjk.go reads Chinese, Japanese and Korean text.

// atWords and dotWords spell out an e-mail address: "jane dot doe at
// example dot com", "jane (at) example (dot) com", "ana arroba correo punto es".
func atWord(t string) bool {
	return equalFoldAny(t, "at", "arroba", "arobase", "klammeraffe", "собака")
}

func dotWord(t string) bool {
	return equalFoldAny(t, "dot", "punto", "ponto", "point", "punkt", "точка")
}

func equalFoldAny(t string, words ...string) bool {
	for _, w := range words {
		if len(t) == len(w) && strings.EqualFold(t, w) {
			return true
		}
	}
	return false
}

var spelledTLDs = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`com org net edu gov mil int io co uk de fr es it br in jp ru nl pl pt ch at be se no dk fi ie
		ca au nz mx ar cl info biz me ai app dev eu us tv cn kr za ng ke tr gr cz hu ro sk si hr lt lv ee ua
		sg hk tw my id ph vn th ae sa il email mail online tech store cloud`) {
		spelledTLDs[t] = true
	}
}

// mailWord reports whether word j can be part of a written-out address.
func (p *piiScan) mailWord(j int) bool {
	w := p.w[j]
	if w.used || w.end-w.start > 64 {
		return false
	}
	for i := w.start; i < w.end; i++ {
		c := p.s[i]
		if !(isAlnum(c) || c == '_' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}

// spelledGap reports whether the words j-1 and j are joined as in a
// written-out address: spaces and brackets, on one line.
func (p *piiScan) spelledGap(j int) bool {
	g := p.w[j].gap
	return g&(gNewline|gToken|gComma|gColon|gPeriod) == 0
}

// spelledEmail looks for a written-out e-mail address around the "at"
// (or "@") that joins the words lk and dk, and redacts it as the address
// it spells. After an "@" (sign) the domain must spell a dot: one written
// with periods only is the byte-level detector's.
//
// An "at" in brackets ("jo(at)example.com", "jo [at] example [dot] com")
// or an "@" is written only in addresses. A bare "at" is also a
// preposition ("meet at example.com", "available at docs.example.com",
// "look at this dot com"), so an address joined by one must spell a dot
// ("jo at example dot com") or have a local part no sentence has
// ("jane.doe at example.com", "jo42 at example.com"). A local part of
// one word before an "at", bracketed or not, must not be a word that
// comes before "at" in prose ("available (at) amazon.com").
func (p *piiScan) spelledEmail(lk, dk int, strong, sign bool) {
	if !p.spelledGap(dk) || !p.mailWord(lk) || !p.mailWord(dk) {
		return
	}
	// The domain: labels joined by a dot word or a '.'.
	var labels, local [8]int
	nl, nd, spelled, lastLit := 0, 1, 0, false
	labels[0] = dk
	for j := dk; nd < len(labels); nd++ {
		switch {
		case j+2 < len(p.w) && dotWord(p.text(j+1)) && p.spelledGap(j+1) && p.spelledGap(j+2) && p.mailWord(j+2):
			j += 2
			spelled++
			lastLit = false
		case j+1 < len(p.w) && p.w[j+1].gap == gPeriod && p.mailWord(j+1):
			j++
			lastLit = true
		case strong && j+1 < len(p.w) && p.w[j+1].gap == gPeriod|gSpace && p.s[p.w[j].end] == ' ' && p.mailWord(j+1):
			// A period set apart, "jo(at)example . com", is spelled; one
			// that ends a sentence ("support(at)acme. It works") is not.
			j++
			spelled++
			lastLit = false
		default:
			goto done
		}
		labels[nd] = j
	}
	return
done:
	if sign && spelled == 0 {
		return
	}
	if tld := p.text(labels[nd-1]); nd < 2 || !(spelledTLD(tld) || strong && lastLit && topLevelDomain(tld)) {
		return
	}
	// The local part: words joined the same way.
	local[0], nl = lk, 1
	for i := lk; nl < len(local); nl++ {
		switch {
		case i >= 2 && dotWord(p.text(i-1)) && p.spelledGap(i) && p.spelledGap(i-1) && p.mailWord(i-2) && !atWord(p.text(i-2)):
			i -= 2
			spelled++
		case i >= 1 && p.w[i].gap == gPeriod && p.mailWord(i-1):
			i--
		default:
			goto found
		}
		local[nl] = i
	}
	return
found:
	if !sign && nl == 1 {
		t := p.text(lk)
		if proseBeforeAt(t) || !strong && spelled == 0 && !mailboxLike(t) && !p.mailboxWord(lk, t, p.text(labels[0])) {
			return
		}
	}
	var b strings.Builder
	for n := nl - 1; n >= 0; n-- {
		b.WriteString(strings.ToLower(p.text(local[n])))
		if n > 0 {
			b.WriteByte('.')
		}
	}
	b.WriteByte('@')
	for n := 0; n < nd; n++ {
		if n > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.ToLower(p.text(labels[n])))
	}
	from, to := local[nl-1], labels[nd-1]
	p.m = append(p.m, Match{Start: int(p.w[from].start), End: int(p.w[to].end), Kind: KindEmail, Value: b.String()})
	for n := from; n <= to; n++ {
		p.w[n].used = true
	}
}

// bracketedAt reports whether the "at" at word k is set in brackets,
// "(at)", "[at]", "{at}" or "<at>", as only an e-mail address writes it.
func (p *piiScan) bracketedAt(k int) bool {
	w := p.w[k]
	if w.start == 0 || int(w.end) >= len(p.s) {
		return false
	}
	switch p.s[w.start-1] {
	case '(':
		return p.s[w.end] == ')'
	case '[':
		return p.s[w.end] == ']'
	case '{':
		return p.s[w.end] == '}'
	case '<':
		return p.s[w.end] == '>'
	}
	return false
}

// atSign reports whether words k-1 and k are joined by an "@" (with
// spaces around it or not): "jo@example dot com", whose domain the
// byte-level detector cannot read.
func (p *piiScan) atSign(k int) bool {
	g := strings.TrimSpace(p.s[p.w[k-1].end:p.w[k].start])
	return g == "@"
}

// proseBeforeAt reports words that come before "at" in a sentence far
// more often than as the local part of an address: "meet at", "look at
// this dot com", "find us at acme dot com".
func proseBeforeAt(t string) bool {
	switch strings.ToLower(t) {
	case "look", "looks", "looked", "looking", "meet", "meets", "met", "meeting", "arrive", "arrives", "arrived",
		"stay", "stayed", "staying", "available", "online", "located", "based", "live", "lives", "living", "work",
		"works", "worked", "working", "us", "me", "him", "her", "them", "you", "it", "is", "are", "was", "were",
		"be", "been", "here", "there", "and", "or", "but", "not", "only", "even", "right", "up", "out", "back",
		"point", "pointed", "aim", "aimed", "started", "stopped", "seen", "found", "sold", "bought", "hosted",
		"published", "posted", "listed", "visit", "go", "went", "shop", "order", "ordered", "buy", "get", "sign",
		"signed", "write", "reach", "find", "call", "text", "ping":
		return true
	}
	return false
}

// mailboxLike reports whether t, the one word before a bare "at", reads
// as a mailbox rather than a word: it has a digit, '_', '+' or '-'.
func mailboxLike(t string) bool {
	for i := 0; i < len(t); i++ {
		if isDigit(t[i]) || t[i] == '_' || t[i] == '+' || t[i] == '-' {
			return true
		}
	}
	return false
}

// mailboxWord reports whether t, a plain word before a bare "at" and a
// domain with periods (first label domain), is an address's local part
// all the same: a given or family name ("john at gmail.com", "smith at
// acme.io"), a mail provider's domain ("jsmith at gmail.com"), or an
// e-mail cue among the three words before ("email: jsmith at acme.io").
// A word of prose before "at" ("meet at example.com", "lunch at
// noon.com") is none of these.
func (p *piiScan) mailboxWord(k int, t, domain string) bool {
	if lookupWord(t)&(lxGiven|lxSurname) != 0 || mailProviders[strings.ToLower(domain)] {
		return true
	}
	for j := k - 1; j >= 0 && j >= k-3; j-- {
		if mailCues[strings.ToLower(p.text(j))] {
			return true
		}
	}
	return false
}

// mailProviders are the first labels of the domains of large mail
// providers, which a sentence's "at" hardly ever precedes.
var mailProviders = map[string]bool{"gmail": true, "googlemail": true, "yahoo": true, "hotmail": true, "outlook": true,
	"icloud": true, "aol": true, "protonmail": true, "proton": true, "gmx": true, "yandex": true, "zoho": true,
	"fastmail": true, "qq": true, "naver": true, "t-online": true, "libero": true, "wanadoo": true, "btinternet": true,
	"comcast": true, "verizon": true, "mailbox": true, "posteo": true, "tutanota": true, "seznam": true}

// mailCues are words that announce an e-mail address.
var mailCues = map[string]bool{"email": true, "e-mail": true, "mail": true, "mailto": true, "courriel": true,
	"correo": true, "address": true, "contact": true, "emails": true}

// spelledTLD reports whether t is a top-level domain a written-out
// address may end with.
func spelledTLD(t string) bool {
	if len(t) > 8 {
		return false
	}
	var buf [8]byte
	for i := 0; i < len(t); i++ {
		buf[i] = lowerASCII(t[i])
	}
	return spelledTLDs[string(buf[:len(t)])]
}

// dobAfter redacts the date at word k when a date-of-birth cue follows it
// closely on its line: "12/03/1988 (date of birth)", "1990-01-02 is his
// DOB", "1988年3月12日生まれ".
func (p *piiScan) dobAfter(k int) {
	end, ok := parseDate(p.s, int(p.w[k].start))
	if !ok {
		return
	}
	last := k
	for last+1 < len(p.w) && p.w[last+1].start < int32(end) {
		last++
	}
	cue := strings.HasPrefix(p.s[end:], "生") || strings.HasPrefix(p.s[end:], "出生")
	for j := last + 1; !cue && j < len(p.w) && j <= last+5 && p.w[j].start <= int32(end)+40; j++ {
		if p.w[j].gap&(gNewline|gToken|gPeriod) != 0 || p.w[j].used || p.w[j].shape != wAlpha {
			break
		}
		if p.has(j, lxDOB) {
			// A cue with a date of its own after it is that date's:
			// "delivered 09/04/2026; the customer was born 07/03/1945".
			dated := false
			p.next(j, func(n int) bool {
				if _, ok := parseDate(p.s, int(p.w[n].start)); ok {
					dated = true
					return false
				}
				return p.w[n].shape == wAlpha && n <= j+3
			})
			cue = !dated
			break
		}
	}
	if cue {
		p.add(k, last+1, KindDOB, int(p.w[k].start), end)
	}
}

// Names.

// commonGiven reports a given name that is also a common word or a month
// (Will, Hope, Mark, June): written with a capital inside a sentence and
// followed by a surname, it is a name.
func (p *piiScan) commonGivenName(k int) int {
	w := p.w[k]
	if w.upper != 1 || k+1 >= len(p.w) || p.w[k+1].upper != 1 || w.shape != wAlpha || w.used || !p.has(k, lxGiven) {
		return -1
	}
	j := k + 1
	if j >= len(p.w) || p.w[j].gap != gSpace || p.w[j].used || p.w[j].upper != 1 || p.w[j].shape != wAlpha {
		return -1
	}
	if !p.has(k, lxStop|lxMonth) && !p.has(j, lxStop|lxMonth|lxCompany|lxStreetEN) {
		return -1 // the usual rules read it
	}
	// After a cue ("Dear Marco Sharma", "Regards, June Okafor") the word
	// after it need not be a known surname: any capitalised word that is
	// not a common word, a month, a company or a title word.
	if p.has(k, lxStop|lxMonth) && p.isNameWord(j) && p.cued(k) {
		return j
	}
	if p.has(j, lxStop|lxMonth|lxCompany|lxStreetEN|lxTitle|lxCue) && !p.has(j, lxSurname) {
		return -1
	}
	if !p.has(j, lxSurname) {
		return -1
	}
	// "Mark Cook", "Will Page": the next word is a surname. The name may
	// have a third word ("Will J. Page" is read by the usual rules).
	if j+1 < len(p.w) && p.w[j+1].gap == gSpace && p.has(j+1, lxCompany) {
		return -1
	}
	return j
}

// lowerName redacts a name written in lower case right after a cue
// ("customer john smith", "hi maria garcia", "my name is ahmed khan"): a
// given name from the gazetteer and the word after it, unless that is a
// stop word.
func (p *piiScan) lowerName(k int) int {
	w := p.w[k]
	if w.upper != 0 || w.shape != wAlpha || w.used || !p.has(k, lxGiven) {
		return -1 // most words: no look-up (the pre-filter), no rune decoded
	}
	if r, _ := utf8.DecodeRuneInString(p.text(k)); !unicode.IsLower(r) {
		return -1 // a script without case: Arabic names have their own rule
	}
	if w.upper != 0 || w.shape != wAlpha || w.used || !p.has(k, lxGiven) || p.has(k, lxStop|lxMonth) || !p.cued(k) {
		return -1
	}
	last := k
	if j := k + 1; j < len(p.w) && p.w[j].gap == gSpace && p.w[j].shape == wAlpha && !p.w[j].used && p.w[j].upper == 0 &&
		!p.has(j, lxStop|lxCue|lxMonth|lxCompany|lxDOB|lxID|lxIDFiller) {
		last = j
	}
	p.add(k, last+1, KindName, int(w.start), int(p.w[last].end))
	return last + 1
}

// capsName redacts a name written in capitals after a cue: "NAME: JOHN
// SMITH", "Patient: MARIA GARCIA", "Dear MR JOHN SMITH". Headings,
// acronyms and codes are in capitals too, so only a cued run counts, and
// only when it starts with a given name of the gazetteer that is not also
// a common word or a month, or follows an honorific that itself follows a
// cue ("Dear MR SMITH"): "MS WORD", "DR SITE", "MR FIX LOGIN", "Name:
// UNKNOWN" and "Dear VALUED CUSTOMER" stay.
func (p *piiScan) capsName(k int) int {
	w := p.w[k]
	if w.upper != 2 || w.shape != wAlpha || w.used || w.end-w.start < 2 || !p.capsNameWord(k) {
		return -1
	}
	given := p.has(k, lxGiven) && !p.has(k, lxStop|lxMonth)
	titled := k >= 1 && p.has(k-1, lxTitle) && p.cued(k-1)
	if !given && !titled || !p.cued(k) {
		return -1
	}
	last := k
	for j := k + 1; j < len(p.w) && j <= k+4; j++ {
		gap := p.w[j].gap
		if gap != gSpace && !(gap == gPeriod|gSpace && p.isInitial(j-1)) {
			break
		}
		if p.w[j].upper != 0 && p.w[j].shape == wAlpha && !p.w[j].used && (p.w[j].upper == 2 && p.capsNameWord(j) || p.isInitial(j)) {
			last = j
			continue
		}
		// A particle or one letter between: "MARIA DE LA CRUZ", "AOIFE Ó BRIAIN".
		oneLetter := utf8.RuneCountInString(p.text(j)) == 1
		if p.w[j].upper != 0 && (p.has(j, lxParticle) || oneLetter) && j+1 < len(p.w) && p.w[j+1].gap == gSpace {
			continue
		}
		break
	}
	p.add(k, last+1, KindName, int(w.start), int(p.w[last].end))
	return last + 1
}

// capsNameWord reports whether word j, in capitals, can be part of a name:
// not a common, company, title, cue, month, street or id word.
func (p *piiScan) capsNameWord(j int) bool {
	return p.w[j].end-p.w[j].start >= 2 &&
		!p.has(j, lxStop|lxMonth|lxCompany|lxTitle|lxCue|lxID|lxDOB|lxIDFiller|lxStreetEN|lxStreetFR|lxStreetDE|lxUSState|lxPostcue|lxParticle)
}

// isArabic reports whether word k is written in Arabic script.
func (p *piiScan) isArabic(k int) bool {
	if c := p.s[p.w[k].start]; c < 0xD8 || c > 0xDB {
		return false // not a two-byte character of the Arabic block
	}
	r, _ := utf8.DecodeRuneInString(p.text(k))
	return unicode.Is(unicode.Arabic, r)
}

// arabicName redacts a name in Arabic script: a given name from the
// gazetteer, or any word after a cue (السيد, العميل, ...), and the name
// words after it (a family name with ال, another given name, عبد or بن
// and the word after).
func (p *piiScan) arabicName(k int) int {
	if !p.isArabic(k) || p.w[k].used {
		return -1
	}
	given := p.has(k, lxGiven)
	cued := k > 0 && p.isArabic(k-1) && p.has(k-1, lxCue|lxTitle) && p.w[k].gap&(gNewline|gToken) == 0
	if !given && !cued || p.has(k, lxCue|lxTitle) {
		return -1
	}
	last := k
	for j := k + 1; j < len(p.w) && j <= k+3 && p.w[j].gap == gSpace && p.isArabic(j) && !p.w[j].used; j++ {
		t := p.text(j)
		if strings.HasPrefix(t, "ال") && !p.has(j, lxStop) || p.has(j, lxGiven) {
			last = j
			continue
		}
		if t == "عبد" || t == "بن" || t == "بنت" || t == "ابن" {
			if j+1 < len(p.w) && p.isArabic(j+1) {
				last = j + 1
				j++
				continue
			}
		}
		break
	}
	if last == k && !cued {
		return -1
	}
	p.add(k, last+1, KindName, int(p.w[k].start), int(p.w[last].end))
	return last + 1
}

// Addresses.

// streetCueWords introduce a flat, house or plot number ("Flat 12B",
// "H.No. 8-2-293", "Plot 7, Sector 15").
func streetCue(t string) bool {
	switch strings.ToLower(t) {
	case "flat", "apt", "apartment", "plot", "unit", "suite", "door", "house", "sector", "block", "wohnung", "appartement",
		"apto", "apartamento", "piso", "quadra", "lote", "casa", "кв", "квартира", "дом":
		return true
	}
	return false
}

// buildingWord ends the name of a building or a locality written after a
// flat or house number ("Sunrise Apartments", "Banjara Hills").
func buildingWord(t string) bool {
	switch strings.ToLower(t) {
	case "apartments", "apartment", "residency", "residence", "residences", "towers", "tower", "enclave", "nagar", "colony",
		"layout", "hills", "complex", "society", "heights", "villas", "villa", "house", "building", "court", "mansions",
		"gardens", "estate", "park", "plaza", "chambers", "block", "phase", "extension", "vihar", "bagh", "puram", "palya":
		return true
	}
	return false
}

// streetCueNumber redacts "Flat 12B", "Plot 7, Sector 15", "H.No.
// 8-2-293, Banjara Hills": a flat, house or plot word and its number, and
// after a comma another such pair or a building or locality name.
func (p *piiScan) streetCueNumber(k int) bool {
	c := k - 1
	if c < 0 || p.w[c].used {
		return false
	}
	// "H.No.", "House No.": the number word after the cue word.
	if strings.EqualFold(p.text(c), "no") && c > 0 && (strings.EqualFold(p.text(c-1), "h") || streetCue(p.text(c-1))) {
		c--
	} else if !streetCue(p.text(c)) || p.w[c].shape != wAlpha {
		return false
	}
	if p.w[k].gap&^(gSpace|gPeriod) != 0 || !houseNumberLoose(p.text(k)) {
		return false
	}
	last := k
	for j := last + 1; j < len(p.w) && j <= last+4; {
		if p.w[j].gap&^(gSpace|gComma) != 0 || p.w[j].used {
			break
		}
		if streetCue(p.text(j)) && j+1 < len(p.w) && houseNumberLoose(p.text(j+1)) && p.w[j+1].gap == gSpace {
			last = j + 1
			j += 2
			continue
		}
		// A building or locality: capitalised words ending in one.
		e := -1
		for n := j; n < len(p.w) && n <= j+3 && (n == j || p.w[n].gap == gSpace) && p.w[n].upper != 0 && p.w[n].shape == wAlpha; n++ {
			if buildingWord(p.text(n)) {
				e = n
			}
		}
		if e < 0 {
			break
		}
		last = e
		j = e + 1
	}
	p.add(c, last+1, KindAddress, int(p.w[c].start), int(p.w[last].end))
	return true
}

// houseNumberLoose: a house number, also with a letter, a slash or
// several hyphenated parts ("12B", "8-2-293", "10/12").
func houseNumberLoose(t string) bool {
	if t == "" || !isDigit(t[0]) || len(t) > 12 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !(isAlnum(t[i]) || t[i] == '-' || t[i] == '/') {
			return false
		}
	}
	return true
}

// blockNumber: a Japanese block address written in Latin letters,
// "1-2-3 Jingumae": chōme, block and house numbers and the district.
func (p *piiScan) blockNumber(k int) bool {
	t := p.text(k)
	if strings.Count(t, "-") != 2 || len(t) > 11 || k+1 >= len(p.w) || p.w[k+1].gap != gSpace || !p.nameLike(k+1) {
		return false
	}
	run := 0
	for i := 0; i <= len(t); i++ {
		if i == len(t) || t[i] == '-' {
			if run == 0 || run > 4 {
				return false
			}
			run = 0
			continue
		}
		if !isDigit(t[i]) {
			return false
		}
		run++
	}
	p.add(k, k+2, KindAddress, int(p.w[k].start), int(p.w[k+1].end))
	return true
}

// worldPostcode redacts postcodes of more countries at word k: Brazilian
// CEP "01310-100", Japanese "150-0001" (after 〒 or a city), Polish
// "00-590" and Swedish "111 51" before a city, Indian PIN and Russian
// indexes (six digits) next to a city, Australian after a state code,
// Canadian "M5V 2T6" and Irish Eircodes "D02 X285".
func (p *piiScan) worldPostcode(k int) bool {
	w := p.w[k]
	t := p.text(k)
	if len(t) < 3 || len(t) > 9 || !isDigit(t[0]) {
		return false // no shape below: most numbers stop here, before any word is looked up
	}
	// The context is read only for a number of one of the shapes.
	prevCity := func() bool {
		return k > 0 && p.w[k].gap&^(gSpace|gOther|gComma) == 0 && p.w[k-1].shape == wAlpha && p.w[k-1].upper != 0 &&
			!p.has(k-1, lxStop|lxMonth) && !p.has(k-1, lxCompany)
	}
	nextCity := func() bool { return k+1 < len(p.w) && p.w[k+1].gap&^(gSpace|gComma) == 0 && p.cityLike(k+1) }
	cue := func() bool {
		return k > 0 && (p.has(k-1, lxPostcue) || strings.EqualFold(p.text(k-1), "cep") || strings.EqualFold(p.text(k-1), "pin") ||
			strings.EqualFold(p.text(k-1), "pincode")) || w.start >= 3 && p.s[w.start-3:w.start] == "〒"
	}
	digitsShape := func(parts ...int) bool {
		i := 0
		for n, want := range parts {
			if n > 0 {
				if i >= len(t) || t[i] != '-' {
					return false
				}
				i++
			}
			for j := 0; j < want; j++ {
				if i >= len(t) || !isDigit(t[i]) {
					return false
				}
				i++
			}
		}
		return i == len(t)
	}
	switch {
	case digitsShape(5, 3): // CEP
	case digitsShape(3, 4) && (cue() || prevCity()): // Japan
	case digitsShape(2, 3) && (cue() || nextCity()): // Poland
	case digitsShape(6) && t[0] != '0' && (cue() || prevCity() || nextCity() && p.w[k+1].gap&gComma != 0): // India, Russia
	case digitsShape(8) && (cue() || k > 0 && p.w[k].gap&^(gSpace|gComma) == 0 && p.w[k-1].upper == 2 && len(p.text(k-1)) == 2): // CEP without its hyphen
	case digitsShape(4) && k > 0 && p.w[k-1].upper == 2 && auState(p.text(k-1)):
	case digitsShape(3) && k+1 < len(p.w) && p.w[k+1].gap == gSpace && len(p.text(k+1)) == 2 && p.w[k+1].shape == wDigits &&
		k+2 < len(p.w) && p.cityLike(k+2): // Sweden "111 51 Stockholm"
		p.add(k, k+2, KindAddress, int(w.start), int(p.w[k+1].end))
		return true
	case digitsShape(3) && (cue() || prevCity()) && k+1 < len(p.w) && p.w[k+1].gap == gSpace && len(p.text(k+1)) == 3 &&
		p.w[k+1].shape == wDigits && !amountAfter(p.s, int(p.w[k+1].end)):
		p.add(k, k+2, KindAddress, int(w.start), int(p.w[k+1].end)) // "560 001"
		return true
	default:
		return false
	}
	p.add(k, k+1, KindAddress, int(w.start), int(w.end))
	return true
}

func auState(t string) bool {
	switch t {
	case "NSW", "VIC", "QLD", "WA", "SA", "TAS", "ACT", "NT":
		return true
	}
	return false
}

// alnumPostcode redacts Canadian postcodes "M5V 2T6" and Irish Eircodes
// "D02 X285" starting at word k.
func (p *piiScan) alnumPostcode(k int) bool {
	if k+1 >= len(p.w) || p.w[k+1].gap != gSpace {
		return false
	}
	a, b := p.text(k), p.text(k+1)
	ok := false
	switch {
	case len(a) == 3 && len(b) == 3 && isUpperASCII(a[0]) && isDigit(a[1]) && isUpperASCII(a[2]) &&
		isDigit(b[0]) && isUpperASCII(b[1]) && isDigit(b[2]):
		ok = true // Canada
	case len(a) == 3 && len(b) == 4 && isUpperASCII(a[0]) && isDigit(a[1]) && (isDigit(a[2]) || a == "D6W"):
		letters, digits := 0, 0
		for i := 0; i < 4; i++ {
			switch {
			case isUpperASCII(b[i]):
				letters++
			case isDigit(b[i]):
				digits++
			}
		}
		ok = letters+digits == 4 && letters >= 1 && digits >= 1 && isUpperASCII(b[0])
	}
	if !ok {
		return false
	}
	p.add(k, k+2, KindAddress, int(p.w[k].start), int(p.w[k+1].end))
	return true
}

// amountAfter reports decimals after s[:e]: "932 497,54 €" is an amount.
func amountAfter(s string, e int) bool {
	return e+1 < len(s) && (s[e] == ',' || s[e] == '.') && isDigit(s[e+1])
}
