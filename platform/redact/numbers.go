package redact

import (
	"net/netip"
	"strings"
)

// Numbers: payment cards, phone numbers, US social security numbers and IP
// addresses, and the numbers that look like them but must survive (dates,
// amounts, versions, order ids, numbers failing their checksum).

const maxGroups = 10

// A grp is one run of digits in a number written in groups, such as the
// "555" of "(415) 555-0132".
type grp struct {
	start, end int  // the digits
	close      int  // after the digits and any ')'
	sep        byte // what joined it to the group before: ' ', '-', '.', '/', '(' or ')'
	paren      bool // written in parentheses
}

func (g grp) len() int { return g.end - g.start }

// number handles a word starting with a digit at s[i]; s[i:j] is the word.
func (sc *scanner) number(i, j int) int {
	s := sc.s
	if j-i <= 4 && j < len(s) && s[j] == ':' && allHex(s[i:j]) {
		if e := sc.ipv6(i); e > 0 {
			return e
		}
	}
	for k := i; k < j; k++ {
		if !isDigit(s[k]) {
			if !sc.glued(i) {
				if e := sc.underscoreCard(i, j); e > 0 {
					return e
				}
			}
			return sc.entropy(i, j)
		}
	}
	if sc.glued(i) {
		// A whole card number after an abbreviation's period is a card
		// ("Card no.4111 1111 1111 1111"); after a hyphen or slash it is
		// an identifier's tail (id-4111111111111111), and after a digit
		// and a period a decimal's fraction (0.4111111111111111).
		if s[i-1] == '.' && isAlpha(s[i-2]) {
			if e := sc.gluedCard(i); e > 0 {
				return e
			}
		}
		return sc.skipNumeric(i)
	}
	if e, ok := sc.ipv4(i); ok {
		return e
	}
	if e := amountEnd(s, i); e > 0 {
		return skipWord(s, e)
	}
	return sc.digits(i, false)
}

// glued reports whether the number at s[i] is the tail of an identifier
// such as ORD-2024-00917, v1.2.3 or a URL path.
func (sc *scanner) glued(i int) bool {
	s := sc.s
	if i < 2 {
		return false
	}
	switch s[i-1] {
	case '-', '.', '/':
		return isAlnum(s[i-2])
	}
	return false
}

// gluedCard returns the end of a Luhn-valid card number at s[i], or 0.
func (sc *scanner) gluedCard(i int) int {
	n := sc.parseGroups(i)
	if n == 0 {
		return 0
	}
	if e, done := sc.card(n); done && len(sc.m) > 0 {
		if last := sc.m[len(sc.m)-1]; last.Kind == KindCard && last.Start == sc.g[0].start {
			return e
		}
	}
	return 0
}

// underscoreCard handles a word s[i:j] of digits in groups joined by
// single underscores, "4111_1111_1111_1111", as some exports and form
// fields write a card: it is a card when the groups are a card's grouping
// and pass the Luhn check. It returns j then, or 0 (an underscore joins
// the bytes of a word, so the groups never reach parseGroups).
func (sc *scanner) underscoreCard(i, j int) int {
	s := sc.s
	if j-i < 16 || j-i > 23 || s[j-1] == '_' {
		return 0
	}
	n, start := 0, i
	for k := i; k <= j; k++ {
		if k < j && isDigit(s[k]) {
			continue
		}
		if k < j && s[k] != '_' || k == start || n == maxGroups {
			return 0
		}
		sep := byte('_')
		if n == 0 {
			sep = 0
		}
		sc.g[n] = grp{start: start, end: k, close: k, sep: sep}
		n++
		start = k + 1
	}
	if n < 3 || !cardShape(sc.g[:n]) || !cardNumber(sc.digitsOf(sc.g[:n]), false) {
		return 0
	}
	sc.add(i, j, KindCard, "")
	return j
}

// skipNumeric returns the end of the digits and separators from s[i].
func (sc *scanner) skipNumeric(i int) int {
	s := sc.s
	for i < len(s) {
		c := s[i]
		if isDigit(c) {
			i++
			continue
		}
		if (c == '-' || c == '.' || c == '/' || c == ':') && i+1 < len(s) && isDigit(s[i+1]) {
			i += 2
			continue
		}
		break
	}
	return skipWord(s, i)
}

func allHex(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isHex(w[i]) {
			return false
		}
	}
	return w != ""
}

// ipv4 handles a dotted quad at s[i]. It reports whether it consumed one;
// a dotted quad that is not a valid address (999.1.1.1) or that names a
// version (version 10.0.0.1, 1.2.3.4-beta) is consumed without a match.
func (sc *scanner) ipv4(i int) (int, bool) {
	s := sc.s
	p := i
	for part := 0; part < 4; part++ {
		q := p
		for q < len(s) && isDigit(s[q]) && q-p < 4 {
			q++
		}
		if q == p || q-p > 3 {
			return 0, false
		}
		p = q
		if part < 3 {
			if p+1 < len(s) && s[p] == '.' && isDigit(s[p+1]) {
				p++
			} else {
				return 0, false
			}
		}
	}
	if p < len(s) && (isWord(s[p]) || s[p] == '.' && p+1 < len(s) && isDigit(s[p+1])) {
		return 0, false // a longer dotted number: 1.3.6.1.4.1, 10.0.19045.3693
	}
	if p+1 < len(s) && s[p] == '-' && isAlpha(s[p+1]) {
		return skipWord(s, p+1), true // a version: 1.2.3.4-beta
	}
	addr, ok := parseIPv4(s[i:p])
	if !ok || sc.versionBefore(i) || notPersonal(addr) {
		return p, true
	}
	sc.add(i, p, KindIP, addr.String())
	return p, true
}

// parseIPv4 parses a dotted quad, accepting the zero-padded octets
// (192.168.001.010) that some tools print and netip refuses.
func parseIPv4(q string) (netip.Addr, bool) {
	var b [4]byte
	part, v, n := 0, 0, 0
	for i := 0; i <= len(q); i++ {
		if i == len(q) || q[i] == '.' {
			if n == 0 || v > 255 || part > 3 {
				return netip.Addr{}, false
			}
			b[part] = byte(v)
			part, v, n = part+1, 0, 0
			continue
		}
		v = v*10 + int(q[i]-'0')
		n++
	}
	return netip.AddrFrom4(b), part == 4
}

// versionBefore reports whether the word before s[i] says that what
// follows is a version ("version 10.0.0.1", "build: 4.2.0.1").
func (sc *scanner) versionBefore(i int) bool {
	s := sc.s
	e := i
	for e > 0 && (s[e-1] == ' ' || s[e-1] == ':' || s[e-1] == '=') && i-e < 3 {
		e--
	}
	b := e
	for b > 0 && isAlpha(s[b-1]) {
		b--
	}
	return oneOfFold(s[b:e], "version", "ver", "v", "release", "build", "firmware", "fw", "versao")
}

// ipv6 handles an IPv6 address starting at s[i]; it returns its end, or 0.
func (sc *scanner) ipv6(i int) int {
	s := sc.s
	p, colons, digit := i, 0, false
	for p < len(s) && p-i < 46 {
		c := s[p]
		switch {
		case isDigit(c):
			digit = true
		case isHex(c) || c == '.':
		case c == ':':
			colons++
		default:
			goto done
		}
		p++
	}
done:
	for p > i && (s[p-1] == '.' || s[p-1] == ':' && !(p-2 >= i && s[p-2] == ':')) {
		if s[p-1] == ':' {
			colons--
		}
		p--
	}
	if colons < 2 || !digit || p < len(s) && isWord(s[p]) {
		return 0
	}
	// Eight groups, or fewer with "::" (times and MAC addresses have
	// neither), before asking netip, whose errors allocate.
	if colons != 7 && !strings.Contains(s[i:p], "::") && !(colons == 6 && strings.IndexByte(s[i:p], '.') >= 0) {
		return 0
	}
	e := p
	if e < len(s) && s[e] == '%' { // zone
		z := e + 1
		for z < len(s) && isAlnum(s[z]) {
			z++
		}
		if z > e+1 {
			e = z
		}
	}
	addr, err := netip.ParseAddr(s[i:e])
	if err != nil || !addr.Is6() {
		return 0
	}
	if notPersonal(addr) {
		return e
	}
	sc.add(i, e, KindIP, addr.WithZone("").String())
	return e
}

// amountEnd returns the end of an amount with thousands separators at
// s[i] (1,234,567.89, 1.234.567,89), or 0.
func amountEnd(s string, i int) int {
	p := i
	for p < len(s) && isDigit(s[p]) {
		p++
	}
	if p-i > 3 || p >= len(s) {
		return 0
	}
	for _, seps := range [2][2]byte{{',', '.'}, {'.', ','}} {
		q, groups := p, 0
		for q+3 < len(s) && s[q] == seps[0] && isDigit(s[q+1]) && isDigit(s[q+2]) && isDigit(s[q+3]) && (q+4 == len(s) || !isDigit(s[q+4])) {
			q += 4
			groups++
		}
		if groups == 0 {
			continue
		}
		decimals := 0
		if q+1 < len(s) && s[q] == seps[1] && isDigit(s[q+1]) {
			q++
			for q < len(s) && isDigit(s[q]) {
				q++
				decimals++
			}
		}
		// With '.' between thousands and no decimals, one group is as
		// likely a decimal (1.234) as an amount: leave it to the others.
		if seps[0] == '.' && groups == 1 && decimals == 0 {
			return 0
		}
		return q
	}
	return 0
}

// parseGroups reads the groups of a number starting at s[p] (a digit or
// '(') into sc.g and returns how many it read.
func (sc *scanner) parseGroups(p int) int {
	s := sc.s
	n := 0
	var sep byte
	for n < maxGroups && p < len(s) {
		var g grp
		switch {
		case s[p] == '(':
			q := p + 1
			for q < len(s) && isDigit(s[q]) && q-p <= 5 {
				q++
			}
			if q == p+1 || q >= len(s) || s[q] != ')' {
				return n
			}
			g = grp{start: p + 1, end: q, close: q + 1, sep: sep, paren: true}
		case isDigit(s[p]):
			q := p
			for q < len(s) && isDigit(s[q]) {
				q++
			}
			g = grp{start: p, end: q, close: q, sep: sep}
		default:
			return n
		}
		sc.g[n] = g
		n++
		p = g.close
		if p+1 >= len(s) {
			return n
		}
		switch c := s[p]; {
		case c == ' ' || c == '-' || c == '.' || c == '/':
			if !isDigit(s[p+1]) && s[p+1] != '(' {
				return n
			}
			sep = c
			p++
		case c == '(':
			sep = c
		case g.paren && isDigit(c):
			sep = ')'
		default:
			return n
		}
	}
	return n
}

// trimGroups drops trailing groups that belong to something else: digits
// glued to a word (30th, 5678abc), an integer part before a decimal comma
// (12 345,67) and an hour before a colon (2026-11-30 14:32).
func (sc *scanner) trimGroups(n int) int {
	s := sc.s
	for n > 0 {
		e := sc.g[n-1].close
		if e < len(s) && (isWord(s[e]) || (s[e] == ',' || s[e] == ':') && e+1 < len(s) && isDigit(s[e+1])) {
			n--
			continue
		}
		break
	}
	return n
}

// digits handles a number at s[i], a digit or '(' that starts a group. It
// tries, in order: a payment card, a social security number, and a phone
// number, after setting aside shapes that are something else (dates,
// invalid addresses). Only phones are tried when onlyPhone is set.
func (sc *scanner) digits(i int, onlyPhone bool) int {
	s := sc.s
	n := sc.parseGroups(i)
	if n == 0 {
		return i + 1
	}
	full := sc.g[n-1].close
	// A parcel or pallet number (SSCC, DHL: 18–20 digits from 00) in any
	// grouping is neither a phone number nor a card after its "00".
	if s[sc.g[0].start] == '0' && sc.g[0].len() >= 2 && s[sc.g[0].start+1] == '0' {
		total := 0
		for _, x := range sc.g[:n] {
			total += x.len()
		}
		if total >= 18 && total <= 22 {
			return skipWord(s, full)
		}
	}
	// The first group joined by a space, where the next try starts: in
	// "ref 12 415-555-0132" the phone starts at the second group.
	restart := 0
	for k := 1; k < n; k++ {
		if sc.g[k].sep == ' ' {
			restart = sc.g[k-1].close
			break
		}
	}
	if t := sc.trimGroups(n); t < n && !onlyPhone && !sc.g[0].paren {
		// A whole card number goes before the trimming rules: its last
		// group is not an integer part just because ",2" follows it.
		start := sc.g[0].start
		if e, done := sc.card(n); done && len(sc.m) > 0 {
			if last := sc.m[len(sc.m)-1]; last.Kind == KindCard && last.Start == start {
				return e
			}
		}
	}
	n = sc.trimGroups(n)
	if n > 0 {
		if e, done := sc.groups(i, n, onlyPhone); done {
			return e
		}
	}
	if onlyPhone {
		return i + 1
	}
	if restart > 0 {
		return restart
	}
	return skipWord(s, full)
}

// groups evaluates the n groups in sc.g; done reports that they were
// matched or set aside, and e is where to go on.
func (sc *scanner) groups(i, n int, onlyPhone bool) (e int, done bool) {
	g := sc.g[:n]
	if !onlyPhone && !g[0].paren {
		if e, done := sc.card(n); done {
			return e, true
		}
		if n >= 3 && g[0].len() == 3 && g[1].len() == 2 && g[2].len() == 4 &&
			g[1].sep == g[2].sep && (g[1].sep == '-' || g[1].sep == ' ') &&
			(n == 3 || g[3].sep != g[1].sep) {
			if validSSN(sc.digitsOf(g[:3])) {
				sc.add(g[0].start, g[2].end, KindSSN, "")
			}
			return g[2].close, true
		}
		if n >= 4 && g[1].sep == '.' && g[2].sep == '.' && g[3].sep == '.' && (n == 4 || g[4].sep != '.') &&
			g[0].len() <= 3 && g[1].len() <= 3 && g[2].len() <= 3 && g[3].len() <= 3 {
			return g[3].close, true // a dotted quad that is not an address
		}
		if n >= 3 && sc.date(g) {
			return g[2].close, true
		}
		if n == 1 && g[0].len() == 9 && (sc.hasContext(i, ssnWords) || sc.hasContextAfter(g[0].end, ssnWords)) {
			if validSSN(sc.s[g[0].start:g[0].end]) {
				sc.add(g[0].start, g[0].end, KindSSN, "")
				return g[0].close, true
			}
		}
	}
	start := g[0].start
	if g[0].paren {
		start--
	}
	for k := n; k >= 1 && k >= n-2; k-- {
		if sc.phone(g[:k], false, start) {
			sc.add(start, g[k-1].close, KindPhone, "")
			return g[k-1].close, true
		}
	}
	return 0, false
}

var ssnWords = []string{"ssn", "social security", "soc sec", "ss#", "ss no", "social", "taxpayer", "itin"}

// validSSN reports whether the nine digits are an SSN the Social Security
// Administration can issue: not area 000, 666 or 900–999, group 00 or
// serial 0000.
func validSSN(d string) bool {
	if len(d) != 9 {
		return false
	}
	area, group, serial := d[:3], d[3:5], d[5:]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

func (sc *scanner) digitsOf(g []grp) string {
	var b strings.Builder
	for _, x := range g {
		b.WriteString(sc.s[x.start:x.end])
	}
	return b.String()
}

// date reports whether the first three groups are a date: 2026-11-30,
// 30/11/2026, 11.30.2026.
func (sc *scanner) date(g []grp) bool {
	if g[1].sep != g[2].sep || (g[1].sep != '-' && g[1].sep != '/' && g[1].sep != '.') {
		return false
	}
	num := func(x grp) int {
		v := 0
		for k := x.start; k < x.end; k++ {
			v = v*10 + int(sc.s[k]-'0')
		}
		return v
	}
	a, b, c := num(g[0]), num(g[1]), num(g[2])
	switch {
	case g[0].len() == 4 && g[1].len() <= 2 && g[2].len() <= 2:
		return b >= 1 && b <= 12 && c >= 1 && c <= 31
	case g[0].len() <= 2 && g[1].len() <= 2 && g[2].len() == 4:
		return a >= 1 && a <= 31 && b >= 1 && b <= 31 && (a <= 12 || b <= 12)
	}
	return false
}

// card tries the groups in sc.g as a payment card number: 13–19 digits,
// bare or in the groupings issuers print (4-4-4-4, 4-6-5, ...), passing
// the Luhn check. A card-shaped number failing the check is set aside so
// that no other detector takes it.
func (sc *scanner) card(n int) (int, bool) {
	g := sc.g[:n]
	shaped := 0
	for k := n; k >= 1; k-- {
		if !cardShape(g[:k]) {
			continue
		}
		if k < n {
			// A dotted number that goes on with another dotted group
			// is a longer identifier (an OID, a version), not a card.
			if g[k].sep == '.' && g[min(1, k-1)].sep == '.' {
				continue
			}
			// Only a short tail may follow a card: an expiry, a CVV.
			tail := 0
			for _, x := range g[k:] {
				tail += x.len()
			}
			if g[k].len() > 4 || tail > 8 {
				continue
			}
		}
		if shaped == 0 {
			shaped = k
		}
		if k > 1 && g[1].sep == '.' && sc.versionBefore(g[0].start) {
			break // "version 4111.1111.1111.1111"
		}
		d := sc.digitsOf(g[:k])
		if cardNumber(d, k == 1) {
			sc.add(g[0].start, g[k-1].end, KindCard, "")
			return g[k-1].close, true
		}
	}
	if shaped > 0 {
		return g[shaped-1].close, true
	}
	return 0, false
}

func cardShape(g []grp) bool {
	if g[0].paren {
		return false
	}
	if len(g) == 1 {
		return g[0].len() >= 13 && g[0].len() <= 19
	}
	sep := g[1].sep
	if sep != ' ' && sep != '-' && sep != '.' && sep != '_' {
		return false
	}
	for _, x := range g[1:] {
		if x.sep != sep || x.paren {
			return false
		}
	}
	l := func(x int) int { return g[x].len() }
	switch len(g) {
	case 3: // 4-6-5 (American Express), 4-6-4 (Diners Club)
		return l(0) == 4 && l(1) == 6 && (l(2) == 5 || l(2) == 4)
	case 4: // 4-4-4-1..4; with dots or underscores 4-4-4-4 only
		if sep == '.' || sep == '_' {
			return l(0) == 4 && l(1) == 4 && l(2) == 4 && l(3) == 4
		}
		return l(0) == 4 && l(1) == 4 && l(2) == 4 && l(3) >= 1 && l(3) <= 4
	case 5: // 4-4-4-4-1..3; with dots or underscores 4-4-4-4-2..3
		if sep == '.' || sep == '_' {
			return l(0) == 4 && l(1) == 4 && l(2) == 4 && l(3) == 4 && (l(4) == 2 || l(4) == 3)
		}
		return l(0) == 4 && l(1) == 4 && l(2) == 4 && l(3) == 4 && l(4) >= 1 && l(4) <= 3
	}
	return false
}

// cardNumber reports whether d is a card number: a plausible first digit
// and the Luhn check. Bare runs starting with 1 are epoch timestamps in
// milliseconds or nanoseconds far more often than cards, and a bare
// 13-digit run that is a valid EAN-13 is a barcode.
func cardNumber(d string, bare bool) bool {
	if d[0] == '0' || bare && d[0] == '1' {
		return false
	}
	if !luhn(d) {
		return false
	}
	return !(bare && len(d) == 13 && ean13(d))
}

func luhn(d string) bool {
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

func ean13(d string) bool {
	sum := 0
	for i := 0; i < 12; i++ {
		v := int(d[i] - '0')
		if i%2 == 1 {
			v *= 3
		}
		sum += v
	}
	return (10-sum%10)%10 == int(d[12]-'0')
}

// plus handles a '+' that may start an international phone number.
func (sc *scanner) plus(i int) int {
	s := sc.s
	if sc.prevWord(i) || i+1 >= len(s) || !isDigit(s[i+1]) {
		return i + 1
	}
	n := sc.trimGroups(sc.parseGroups(i + 1))
	for k := n; k >= 1 && k >= n-2; k-- {
		if sc.phone(sc.g[:k], true, i) {
			e := sc.g[k-1].close
			sc.add(i, e, KindPhone, "")
			return e
		}
	}
	return i + 1
}

// paren handles a '(' that may start a phone number: "(415) 555-0132".
func (sc *scanner) paren(i int) int {
	if sc.prevWord(i) || i+1 >= len(sc.s) || !isDigit(sc.s[i+1]) {
		return i + 1
	}
	return sc.digits(i, true)
}

var phoneWords = []string{
	"phone", "tel", "mobil", "cell", "call", "sms", "whatsapp", "fax", "handy",
	"portable", "movil", "móvil", "celular", "contact", "dial", "ring me",
	"text me", "reach me", "電話", "携帯", "手机", "电话", "전화", "телефон",
}

// phone reports whether the groups g are a phone number. plus says that
// a '+' came before them; start is where the number starts.
//
// A number after '+' is a phone number when it has 8–15 digits. Other
// numbers must have a shape phone numbers are written in: international
// with 00 and a country code; North American 3-3-4 (or 1-3-3-4); a
// national trunk prefix 0 (030 1234567, 06 12 34 56 78, (020) 7946 0958,
// 090-1234-5678) and 9–12 digits; a parenthesised area code ((11)
// 91234-5678); Spanish mobiles 6xx xx xx xx; Chinese mobiles 1xx xxxx
// xxxx. After a word such as "phone", "call" or "Tel.", any grouping of
// 7–13 digits in groups of at most five will do. None counts when an id
// word directly precedes it ("order 2024-118734", "Rechnung 0616-3136-02").
func (sc *scanner) phone(g []grp, plus bool, start int) bool {
	s := sc.s
	k := len(g)
	d := 0
	for x := 0; x < k; x++ {
		if plus && x == 1 && g[x].paren && g[x].len() == 1 && s[g[x].start] == '0' {
			continue // +44 (0)20 ...: the trunk prefix is not dialled
		}
		d += g[x].len()
	}
	if k > 1 && g[k-1].len() < 2 {
		return false
	}
	if plus {
		return d >= 8 && d <= 15 && (k == 1 || g[0].len() <= 4)
	}
	if d < 7 || d > 15 {
		return false
	}
	first := s[g[0].start:g[0].end]
	laterShort := false
	for _, x := range g[1:] {
		if x.len() < 2 {
			laterShort = true
		}
	}
	shape := false
	switch {
	case len(first) >= 3 && first[0] == '0' && first[1] == '0' && first[2] != '0':
		shape = d >= 10 && !laterShort
	case k == 3 && g[0].len() == 3 && g[1].len() == 3 && g[2].len() == 4:
		shape = true
	case k == 4 && first == "1" && g[1].len() == 3 && g[2].len() == 3 && g[3].len() == 4:
		shape = true
	case k == 3 && g[0].len() == 3 && g[1].len() == 4 && g[2].len() == 4 && first[0] == '1' && first[1] >= '3':
		shape = true // Chinese mobile: 138 0013 8000
	case first[0] == '0' && len(first) >= 2 && first[1] != '0':
		if k == 1 {
			shape = d == 10 || d == 11
		} else {
			shape = len(first) <= 5 && d >= 9 && d <= 12 && !laterShort
		}
	case g[0].paren && (len(first) == 2 || len(first) == 3) && (d == 10 || d == 11) && !laterShort:
		shape = true
	case k == 4 && g[0].len() == 3 && g[1].len() == 2 && g[2].len() == 2 && g[3].len() == 2 &&
		(first[0] == '6' || first[0] == '7' || first[0] == '9'):
		shape = true
	}
	if shape {
		_, id := sc.numberContext(start)
		return !id
	}
	if d > 13 || laterShort || k == 1 && d < 9 {
		return false
	}
	for _, x := range g {
		if k > 1 && x.len() > 5 {
			return false // 2024-118734, 20261130-0042: ids, not phones
		}
	}
	ctx, id := sc.numberContext(start)
	return ctx && !id
}

// idWords name the numbers that follow them as ids rather than phone
// numbers: "order 2024-118734", "Rechnung 0616-3136-02".
var idWords = []string{
	"order", "invoice", "ticket", "case", "ref", "reference", "po", "id", "tracking",
	"account no", "account number", "acct", "customer id", "customer no", "customer number",
	"booking", "reservation", "transaction", "serial", "bestell", "rechnung", "kundennummer",
	"kundennr", "auftrag", "vorgang", "commande", "facture", "dossier", "pedido", "factura",
	"ordine", "fattura", "注文", "订单", "번호", "請求",
}

// numberContext reads the words shortly before s[i]. phone reports a
// word such as "phone", "call" or "Tel." with no id word after it. id
// reports an id word directly before the number, with nothing but
// punctuation or "no."/"Nr."/"number" between: "order 2024-118734",
// "invoice #: 4500012345", "Rechnung Nr. 0616-3136-02".
func (sc *scanner) numberContext(i int) (phone, id bool) {
	w := sc.s[max(0, i-48):i]
	if k := strings.LastIndexByte(w, ']'); k >= 0 {
		w = w[k+1:]
	}
	lp := phoneIndex.lastEnd(w, false)
	li := idIndex.lastEnd(w, true)
	phone = lp >= 0 && li <= lp
	if li < 0 || li <= lp {
		return phone, false
	}
	// Only punctuation and words such as "no." may come between.
	rest := w[li:]
	for len(rest) > 0 {
		if strings.IndexByte(" \t:#.=-(\"'", rest[0]) >= 0 {
			rest = rest[1:]
			continue
		}
		e := 0
		for e < len(rest) && isAlpha(rest[e]) {
			e++
		}
		switch word := rest[:e]; {
		case e == 0:
			if !strings.HasPrefix(rest, "°") {
				return phone, false
			}
			rest = rest[len("°"):]
			continue
		case strings.EqualFold(word, "no"), strings.EqualFold(word, "nr"), strings.EqualFold(word, "n"),
			strings.EqualFold(word, "num"), strings.EqualFold(word, "number"), strings.EqualFold(word, "nummer"),
			strings.EqualFold(word, "numero"), strings.EqualFold(word, "id"), strings.EqualFold(word, "ref"):
		default:
			return phone, false
		}
		rest = rest[e:]
	}
	return phone, true
}

// A keywords index finds the last of a set of keywords in a short text
// in one backward pass.
type keywords struct {
	byFirst [256][]string // lower-case keywords by first byte
	longest int
}

func newKeywords(words []string) *keywords {
	k := &keywords{}
	for _, w := range words {
		k.byFirst[w[0]] = append(k.byFirst[w[0]], w)
		k.longest = max(k.longest, len(w))
	}
	return k
}

var (
	phoneIndex = newKeywords(phoneWords)
	idIndex    = newKeywords(idWords)
)

// lastEnd returns the end of the keyword occurrence in s that ends last,
// comparing ASCII letters without case, or -1. With whole, a keyword must
// start a word and, if short, also end one ("id" is not in "said", "ref"
// not in "refund").
func (kw *keywords) lastEnd(s string, whole bool) int {
	best := -1
	for i := len(s) - 1; i >= 0 && i+kw.longest > best; i-- {
		for _, w := range kw.byFirst[lowerASCII(s[i])] {
			e := i + len(w)
			if e <= best || e > len(s) || !hasPrefixFold(s[i:], w) {
				continue
			}
			if whole {
				startOK := i == 0 || !isAlpha(s[i-1]) || !isAlpha(w[0])
				endOK := len(w) > 3 || e == len(s) || !isAlpha(s[e]) || !isAlpha(w[len(w)-1])
				if !startOK || !endOK {
					continue
				}
			}
			best = e
		}
	}
	return best
}

func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for k := 0; k < len(prefix); k++ {
		if lowerASCII(s[k]) != prefix[k] {
			return false
		}
	}
	return true
}

// indexFold is the first index of needle (lower case) in s, comparing
// ASCII letters without case, or -1.
func indexFold(s, needle string) int {
	n := len(needle)
outer:
	for i := 0; i+n <= len(s); i++ {
		for k := 0; k < n; k++ {
			if lowerASCII(s[i+k]) != needle[k] {
				continue outer
			}
		}
		return i
	}
	return -1
}

// notPersonal reports addresses that identify no one: loopback and the
// unspecified address (Warden's own "listening on 127.0.0.1:8080").
func notPersonal(a netip.Addr) bool {
	return a.IsLoopback() || a.IsUnspecified()
}
