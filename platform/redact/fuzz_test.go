package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// plantedValues makes one valid card, IBAN, e-mail address, virtual key,
// name, date of birth, passport number, street line and written-out
// e-mail address from seed, each in one of the ways people write them,
// and the cue each is written after: names, dates of birth and passport
// numbers are found only after a cue.
func plantedValues(seed uint64) (values, cues []string) {
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed>>7|1))}
	// E-mail: a valid dot-atom local part and a domain ending in letters.
	local := g.chars(genLower+genDigits, g.n(1, 12))
	for range g.n(0, 2) {
		local += g.pick(".", "_", "+", "-", "%") + g.chars(genLower+genDigits+genUpper, g.n(1, 8))
	}
	if local == "git" {
		local = "gitte"
	}
	domain := g.chars(genLower+genDigits, g.n(1, 10))
	for range g.n(0, 2) {
		domain += "." + g.chars(genLower+genDigits, g.n(1, 10))
	}
	domain += "." + g.pick("com", "de", "co.uk", "io", "travel", "museum", "example", "xn--p1ai")
	// Cards and IBANs also grouped with dots, underscores or hyphens.
	card := g.card()
	if g.rng.IntN(3) == 0 {
		d, groups := g.cardDigits()
		card = group(d, groups, g.pick(".", "_"))
	}
	iban := g.iban(g.pick("de", "fr", "es", "en"))
	if g.rng.IntN(3) == 0 {
		iban = strings.ReplaceAll(printIBAN(g.ibanRaw(g.pick("de", "fr", "es", "en"))), " ", g.pick("-", ".", "_"))
		if g.rng.IntN(2) == 0 {
			iban = strings.ToLower(iban)
		}
	}
	// A name also in capitals after an honorific, and a date of birth
	// after the cue's other spellings.
	nameCue, name := "Dear ", g.fullName(corpusGiven)
	if g.rng.IntN(4) == 0 {
		nameCue, name = g.pick("Dear MR ", "Dear MRS ", "Patient: MS "), strings.ToUpper(name)
	}
	dobCue := g.pick("date of birth ", "date of birth ", "D.O.B. ", "Patient D.O.B ", "Customer d.o.b ", "DOB: ", "Patient D. O. B. ")
	return []string{
			card,
			iban,
			local + "@" + domain,
			"wk_" + g.randomKey(genURL, g.n(12, 43)),
			name,
			g.dob("en"),
			g.digits(9),
			g.streetEN(),
			g.spelledMail(),
		}, []string{
			"", "", "", "", nameCue, dobCue, "passport ", "", "",
		}
}

// spelledMail is an e-mail address written out: the at in brackets
// ("jo(at)example.com", "jo [at] example [dot] com"), an "@" before a
// spelled dot ("jo@example dot com", "jo@example . com"), or a bare "at"/"AT"/"arroba" with
// a spelled dot and a local part of two words ("jo.k2 at example dot com").
func (g *gen) spelledMail() string {
	label := func() string {
		for {
			l := g.chars(genLower, 1) + g.chars(genLower+genDigits, g.n(1, 9))
			if !atWord(l) && !dotWord(l) && !proseBeforeAt(l) {
				return l
			}
		}
	}
	spelledDot := g.pick(" dot ", " (dot) ", "(dot)", " [dot] ", "[dot]", "{dot}", " DOT ")
	dot, at := spelledDot, ""
	local := label()
	switch g.rng.IntN(3) {
	case 0:
		at = g.pick("(at)", " (at) ", "[at]", " [at] ", "{at}", "<at>", " (AT) ")
		dot = g.pick(".", " . ", spelledDot)
	case 1:
		at = g.pick("@", " @ ")
		dot = g.pick(" . ", spelledDot)
	default:
		at = g.pick(" at ", " AT ", " arroba ", " arobase ")
		local += g.pick(".", spelledDot) + label()
	}
	v := local + at + label()
	for range g.n(0, 1) {
		v += dot + label()
	}
	return v + dot + g.pick("com", "de", "org", "net", "io", "fr", "es", "co"+dot+"uk")
}

// FuzzRedactPlanted plants valid cards, IBANs, e-mail addresses (also
// written out), virtual keys, names, dates of birth, passport numbers and
// street lines into arbitrary text and checks that none survives, that
// valid UTF-8 stays valid, that redaction is idempotent and that the
// output stays proportionate. Arbitrary bytes must never make it panic.
//
//	go test -run='^$' -fuzz=FuzzRedactPlanted -fuzztime=20s ./platform/redact/
func FuzzRedactPlanted(f *testing.F) {
	for _, s := range []string{
		"", "hello", "refund to card", "call +1 (415) 555-0132", `{"password":"x"}`,
		"ORD-2024-00917 $2,400.00 2026-11-30", "電話番号は090-1234-5678です", "\xff\xfe[email:0000000",
		"Bearer ", "postgres://a:b@", "-----BEGIN PRIVATE KEY-----", "[card:1a2b3c4d]",
	} {
		f.Add(s, uint64(len(s)))
	}
	r := New(testKey)
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		// Arbitrary input: no panic, idempotent, bounded.
		out := r.String(text)
		if again := r.String(out); again != out {
			t.Fatalf("String not idempotent:\n in:    %q\n once:  %q\n twice: %q", text, out, again)
		}
		if len(out) > maxGrowth*len(text)+growthSlack {
			t.Fatalf("String(%q) grew from %d to %d bytes", text, len(text), len(out))
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q, not valid UTF-8", text, out)
		}
		_, _ = r.JSON([]byte(text))

		// Planted values: split the text in places and put one value, set
		// off by "; ", at each.
		values, cues := plantedValues(seed)
		var b strings.Builder
		rest := text
		for i, v := range values {
			cut := 0
			if len(rest) > 0 {
				cut = int((seed >> (8 * i)) % uint64(len(rest)+1))
				for cut > 0 && !utf8.RuneStart(rest[cut%len(rest)]) && cut < len(rest) {
					cut++
				}
			}
			b.WriteString(rest[:cut])
			fmt.Fprintf(&b, "; %s%s; ", cues[i], v)
			rest = rest[cut:]
		}
		b.WriteString(rest)
		in := b.String()
		out = r.String(in)
		for i, v := range values {
			if survives(out, v, extends[i]) {
				t.Errorf("planted %q survived:\n in:  %q\n out: %q", v, in, out)
			}
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Errorf("String(%q) = %q, not valid UTF-8", in, out)
		}
	})
}

// extends lists, for each planted value in the order plantedValues makes
// them, the characters that would continue it into a longer token: a card
// followed by one more digit is a different, Luhn-invalid number, a card
// glued to letters ("A4111 1111 1111 1111A") is part of an alphanumeric
// reference, which the card detector leaves alone by design, and an
// IBAN followed by one more character fails mod-97. The text around a
// planted value is arbitrary, so the same digits may also occur there inside
// such a longer token; those occurrences are not the planted value.
var extends = []string{
	genDigits + genUpper + genLower,
	genDigits + genUpper + genLower,
	genDigits + genUpper + genLower + "._%+-",
	genURL,
	genLower + genUpper,
	genDigits + "/.-",
	genDigits + genUpper + genLower,
	genDigits + genUpper + genLower,
	genDigits + genUpper + genLower + "._%+-",
}

// survives reports whether v occurs in out as a whole token: not directly
// preceded or followed by a character of ext.
func survives(out, v, ext string) bool {
	for from := 0; ; {
		i := strings.Index(out[from:], v)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(v)
		before := i > 0 && strings.IndexByte(ext, out[i-1]) >= 0 ||
			// digits after "3." are a decimal's fraction, not the value
			i >= 2 && out[i-1] == '.' && isDigit(out[i-2]) && isDigit(v[0]) ||
			// a number after "a-" or "a/" is an identifier's tail
			// (ORD-4111111111111111), which the card detector leaves alone
			i >= 2 && strings.IndexByte("-/", out[i-1]) >= 0 && isAlnum(out[i-2]) && numeric(v) ||
			// and a value joined by an underscore that is not Markdown
			// emphasis is part of a word (a_4111…, %_DE89…: fold.go)
			i > 0 && out[i-1] == '_' && !emphasis(out, i-1)
		after := end < len(out) && (strings.IndexByte(ext, out[end]) >= 0 ||
			out[end] == '_' && !emphasis(out, end))
		if !before && !after {
			return true
		}
		from = i + 1
	}
}

// numeric reports whether v is written in digits, spaces and hyphens only,
// as cards and passport numbers are.
func numeric(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) && v[i] != ' ' && v[i] != '-' {
			return false
		}
	}
	return v != ""
}

// Redaction may lengthen text (a token is longer than "::1"), but never
// by more than this.
const (
	maxGrowth   = 6
	growthSlack = 32
)

// The fuzzer once put "4111 1111 1111 11111" (a 17-digit, Luhn-invalid
// number) next to the planted card "4111 1111 1111 1111". The planted card
// is redacted; the longer number is not a card and is left alone.
func TestPlantedOracleLongerToken(t *testing.T) {
	r := New(testKey)
	in := "; 4111 1111 1111 1111; ; ES7568448112020846697512; ; 4111 1111 1111 11111"
	out := r.String(in)
	if survives(out, "4111 1111 1111 1111", extends[0]) {
		t.Fatalf("planted card survived: %q", out)
	}
	if !strings.Contains(out, "4111 1111 1111 11111") {
		t.Fatalf("17-digit non-card was changed: %q", out)
	}
	// The fuzzer once wrote the same digits glued to letters into its own
	// text ("0000000000A4111 1111 1111 1111A"): that is an alphanumeric
	// reference, not the planted card, which stays redacted.
	glued := r.String("0000000000A4111 1111 1111 1111A; 4111 1111 1111 1111; ")
	if survives(glued, "4111 1111 1111 1111", extends[0]) {
		t.Fatalf("planted card survived next to a glued one: %q", glued)
	}
	// And once the same digits as a decimal's fraction in its own text
	// ("0000.4111 1111 1111 1111"): a number, not the planted card.
	decimal := r.String("; 4111 1111 1111 1111; 0000.4111 1111 1111 1111")
	if survives(decimal, "4111 1111 1111 1111", extends[0]) {
		t.Fatalf("planted card survived next to a decimal: %q", decimal)
	}
	// And once as an identifier's tail in its own text ("0-4111 1111 1111
	// 1111", "a/…", "a_…"), which the card detector leaves alone by design
	// (id-4111111111111111 in TestCard): not the planted card either.
	for _, tail := range []string{"0-", "a/", "a_", "-_"} {
		out := r.String("; 4111 1111 1111 1111; " + tail + "4111 1111 1111 1111")
		if survives(out, "4111 1111 1111 1111", extends[0]) {
			t.Fatalf("planted card survived next to an identifier's tail: %q", out)
		}
	}
	iban := r.String("; DE89 3704 0044 0532 0130 00; %_DE89 3704 0044 0532 0130 00")
	if survives(iban, "DE89 3704 0044 0532 0130 00", extends[1]) {
		t.Fatalf("planted IBAN survived next to one in a word: %q", iban)
	}
	if !survives("; 4111 1111 1111 1111; a-4111 1111 1111 1111", "4111 1111 1111 1111", extends[0]) {
		t.Fatal("oracle misses a card left next to an identifier's tail")
	}
	if !survives("x 4111 1111 1111 1111 y", "4111 1111 1111 1111", extends[0]) {
		t.Fatal("oracle misses a bounded card")
	}
}
