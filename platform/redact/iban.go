package redact

// ibanLengths is the length of an IBAN per country: the SWIFT IBAN
// registry, the countries that use IBANs outside it (mostly in Africa) and
// the French overseas territories that use FR's format.
var ibanLengths = map[[2]byte]int{}

func init() {
	for _, e := range []struct {
		cc string
		n  int
	}{
		{"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16},
		{"BG", 22}, {"BH", 22}, {"BI", 27}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22},
		{"CY", 28}, {"CZ", 24}, {"DE", 22}, {"DJ", 27}, {"DK", 18}, {"DO", 28}, {"EE", 20},
		{"EG", 29}, {"ES", 24}, {"FI", 18}, {"FK", 18}, {"FO", 18}, {"FR", 27}, {"GB", 22},
		{"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27}, {"GT", 28}, {"HN", 28}, {"HR", 21},
		{"HU", 28}, {"IE", 22}, {"IL", 23}, {"IQ", 23}, {"IS", 26}, {"IT", 27}, {"JO", 30},
		{"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32}, {"LI", 21}, {"LT", 20}, {"LU", 20},
		{"LV", 21}, {"LY", 25}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19}, {"MN", 20},
		{"MR", 27}, {"MT", 31}, {"MU", 30}, {"NI", 28}, {"NL", 18}, {"NO", 15}, {"OM", 23},
		{"PK", 24}, {"PL", 28}, {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22},
		{"RU", 33}, {"SA", 24}, {"SC", 31}, {"SD", 18}, {"SE", 24}, {"SI", 19}, {"SK", 24},
		{"SM", 27}, {"SO", 23}, {"ST", 25}, {"SV", 28}, {"TL", 23}, {"TN", 24}, {"TR", 26},
		{"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20}, {"YE", 30},
		// Outside the registry.
		{"AO", 25}, {"BF", 28}, {"BJ", 28}, {"CF", 27}, {"CG", 27}, {"CI", 28}, {"CM", 27},
		{"CV", 25}, {"DZ", 26}, {"GA", 27}, {"GQ", 27}, {"GW", 25}, {"IR", 26}, {"KM", 27},
		{"MA", 28}, {"MG", 27}, {"ML", 28}, {"MZ", 25}, {"NE", 28}, {"SN", 28}, {"TD", 27},
		{"TG", 28},
		// France's overseas departments and territories.
		{"BL", 27}, {"GF", 27}, {"GP", 27}, {"MF", 27}, {"MQ", 27}, {"NC", 27}, {"PF", 27},
		{"PM", 27}, {"RE", 27}, {"TF", 27}, {"WF", 27}, {"YT", 27},
	} {
		ibanLengths[[2]byte{e.cc[0], e.cc[1]}] = e.n
	}
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// iban handles an IBAN starting at s[i] (two letters and two digits), in
// any case, written together or in groups separated by single spaces,
// hyphens, periods or underscores (one kind in one IBAN). A
// string of the right shape failing the mod-97 check is set aside so that
// no other detector takes part of it. It returns where to go on, or 0
// when s[i] does not start anything IBAN-like.
func (sc *scanner) iban(i int) int {
	s := sc.s
	want := ibanLengths[[2]byte{upperASCII(s[i]), upperASCII(s[i+1])}]
	if want == 0 {
		return 0
	}
	var buf [34]byte
	var sep byte // the first separator; the others must be the same
	n, p, groups, longest, cur := 0, i, 1, 0, 0
	for p < len(s) && n < want {
		c := s[p]
		if isAlnum(c) {
			buf[n] = upperASCII(c)
			n++
			p++
			cur++
			longest = max(longest, cur)
			continue
		}
		if ibanSep(c) && (sep == 0 || c == sep) && p+1 < len(s) && isAlnum(s[p+1]) {
			sep = c
			p++
			groups++
			cur = 0
			continue
		}
		break
	}
	// With a separator other than a space, one more group after the
	// last makes a longer identifier, not an IBAN.
	longer := sep != 0 && sep != ' ' && p+1 < len(s) && s[p] == sep && isAlnum(s[p+1])
	if n < want || p < len(s) && isAlnum(s[p]) || longer {
		// Not an IBAN. Set aside a run printed in groups of four, as an
		// IBAN with a digit missing would be; leave other text alone.
		if sep == ' ' && groups >= 3 && longest <= 4 {
			return skipWord(s, p)
		}
		return 0
	}
	if !mod97(buf[:n]) {
		return p
	}
	sc.add(i, p, KindIBAN, "")
	return p
}

// ibanSep reports whether c may separate an IBAN's groups: a space as
// printed, or a hyphen, period or underscore as some forms and exports
// write them (DE89-3704-0044-0532-0130-00, GB82.WEST.1234.5698.7654.32).
func ibanSep(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '_' }

// mod97 is the ISO 7064 check of an upper-case IBAN: moved its first four
// characters to the end, read as a number with letters as 10–35, it leaves
// 1 when divided by 97.
func mod97(b []byte) bool {
	r := 0
	for k := 0; k < len(b); k++ {
		c := b[(k+4)%len(b)]
		switch {
		case '0' <= c && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case 'A' <= c && c <= 'Z':
			r = (r*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return r == 1
}
