package redact

import "strings"

// National identity numbers with a published structure and a checksum,
// found wherever they are written, with a cue or not (issue 28):
//
//   - Indian Aadhaar: 12 digits, the first 2–9, bare or in groups of four,
//     with a Verhoeff check digit;
//   - Brazilian CPF: 11 digits, "123.456.789-09" or bare, two mod-11 check
//     digits;
//   - German Steuerliche Identifikationsnummer: 11 digits, the first not 0,
//     bare or "12 345 678 901"; among the first ten one digit appears two
//     or three times and the rest at most once; an ISO 7064 MOD 11,10
//     check digit;
//   - Indian PAN: five letters, four digits, a letter, the fourth letter
//     naming the holder's type (P, C, H, F, A, T, B, L, J, G).
//
// A bare run of digits directly after an order, invoice or tracking word
// is taken for that id and left alone; a grouped one is not.

// idFind appends the identity numbers in s to dst.
func idFind(dst []Match, s string) []Match {
	for i := 0; i < len(s); {
		c := s[i]
		if i > 0 && isAlnum(s[i-1]) || !(isDigit(c) || isUpperASCII(c)) {
			i++
			continue
		}
		if isUpperASCII(c) {
			if e, ok := panAt(s, i); ok {
				dst = append(dst, Match{Start: i, End: e, Kind: KindID, Value: s[i:e]})
				i = e
				continue
			}
			i++
			continue
		}
		e, m, ok := digitID(s, i)
		if ok {
			dst = append(dst, m)
		}
		i = max(e, i+1)
	}
	meter.add(len(s))
	return dst
}

// panAt reports the end of an Indian PAN at s[i].
func panAt(s string, i int) (int, bool) {
	if i+10 > len(s) || i+10 < len(s) && isAlnum(s[i+10]) {
		return 0, false
	}
	for k := 0; k < 10; k++ {
		c := s[i+k]
		switch {
		case k < 5 || k == 9:
			if !isUpperASCII(c) {
				return 0, false
			}
		case !isDigit(c):
			return 0, false
		}
	}
	switch s[i+3] {
	case 'P', 'C', 'H', 'F', 'A', 'T', 'B', 'L', 'J', 'G':
		return i + 10, true
	}
	return 0, false
}

// digitID reads the number at s[i] and reports an identity number in it;
// e is where the number ends either way.
func digitID(s string, i int) (e int, m Match, ok bool) {
	var d [16]byte
	var groups [6]uint8
	var seps [6]byte
	n, ng := 0, 0
	j := i
	for ng < len(groups) {
		k := j
		for k < len(s) && isDigit(s[k]) && n < len(d) {
			d[n] = s[k]
			n++
			k++
		}
		if k < len(s) && isDigit(s[k]) { // too long for any of these
			return skipNumericAt(s, k), m, false
		}
		groups[ng] = uint8(k - j)
		ng++
		j = k
		if j+1 < len(s) && (s[j] == ' ' || s[j] == '.' || s[j] == '-') && isDigit(s[j+1]) && ng < len(groups) {
			seps[ng] = s[j]
			j++
			continue
		}
		break
	}
	e = j
	if e < len(s) && isAlnum(s[e]) {
		return e, m, false
	}
	g := groups[:ng]
	shape := func(want ...uint8) bool {
		if len(g) != len(want) {
			return false
		}
		for k := range want {
			if g[k] != want[k] {
				return false
			}
		}
		return true
	}
	sameSep := func(c byte) bool {
		for k := 1; k < ng; k++ {
			if seps[k] != c {
				return false
			}
		}
		return true
	}
	bare := ng == 1
	if n != 11 && n != 12 || bare && (idWordBefore(s, i) || i > 0 && (s[i-1] == '#' || s[i-1] == '-' || s[i-1] == '/' || s[i-1] == '.')) {
		return e, m, false
	}
	ds := d[:n]
	ok = false
	switch n {
	case 12:
		ok = (bare || shape(4, 4, 4) && (sameSep(' ') || sameSep('-'))) && ds[0] >= '2' && verhoeff(ds)
	case 11:
		ok = (bare || shape(3, 3, 3, 2) && seps[1] == '.' && seps[2] == '.' && (seps[3] == '-' || seps[3] == '.')) && cpfValid(ds) ||
			(bare || shape(2, 3, 3, 3) && sameSep(' ')) && steuerIDValid(ds)
	}
	if ok {
		m = Match{Start: i, End: e, Kind: KindID, Value: string(ds)}
	}
	return e, m, ok
}

func skipNumericAt(s string, i int) int {
	for i < len(s) && (isAlnum(s[i]) || (s[i] == ' ' || s[i] == '-' || s[i] == '.') && i+1 < len(s) && isDigit(s[i+1])) {
		i++
	}
	return i
}

// idWordBefore reports an order, invoice or tracking word right before
// s[i], as the phone detector reads one.
func idWordBefore(s string, i int) bool {
	w := s[max(0, i-24):i]
	e := refIndex.lastEnd(w, true)
	if e < 0 {
		return false
	}
	for _, c := range []byte(w[e:]) {
		if strings.IndexByte(" \t:#.=-(\"'noNOrR", c) < 0 {
			return false
		}
	}
	return true
}

// refWords name a number after them as a reference of the business, not
// a person's: an identity word ("ID") is not one of them.
var refIndex = newKeywords([]string{"order", "invoice", "ticket", "case", "ref", "reference", "tracking", "booking",
	"reservation", "transaction", "serial", "shipment", "parcel", "awb", "po", "bestell", "rechnung", "auftrag",
	"sendung", "commande", "facture", "pedido", "factura", "ordine", "fattura", "rastreio", "encomenda"})

var (
	vhD = [10][10]uint8{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
		{3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
		{6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
		{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	vhP = [8][10]uint8{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
		{8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
		{2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}}
)

// verhoeff reports whether the digits pass the Verhoeff check.
func verhoeff(d []byte) bool {
	c := uint8(0)
	for i := 0; i < len(d); i++ {
		c = vhD[c][vhP[i%8][d[len(d)-1-i]-'0']]
	}
	return c == 0
}

// cpfValid checks a CPF's two mod-11 check digits; eleven equal digits
// pass the arithmetic and are not issued.
func cpfValid(d []byte) bool {
	same := true
	for i := 1; i < 11; i++ {
		same = same && d[i] == d[0]
	}
	if same {
		return false
	}
	for _, n := range []int{9, 10} {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(d[i]-'0') * (n + 1 - i)
		}
		if sum*10%11%10 != int(d[n]-'0') {
			return false
		}
	}
	return true
}

// steuerIDValid checks a German tax identification number's structure and
// its ISO 7064 MOD 11,10 check digit.
func steuerIDValid(d []byte) bool {
	if d[0] == '0' {
		return false
	}
	var count [10]int
	for i := 0; i < 10; i++ {
		count[d[i]-'0']++
	}
	multi := 0
	for _, c := range count {
		switch {
		case c > 3:
			return false
		case c > 1:
			multi++
		}
	}
	if multi != 1 {
		return false
	}
	product := 10
	for i := 0; i < 10; i++ {
		sum := (int(d[i]-'0') + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = sum * 2 % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	return check == int(d[10]-'0')
}
