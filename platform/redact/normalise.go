package redact

import (
	"net/netip"
	"strings"
)

// Byte classes, one table lookup per byte in the scanners.
const (
	clDigit   = 1 << iota // 0-9
	clUpper               // A-Z
	clLower               // a-z
	clWord                // [A-Za-z0-9_]: a byte inside a word
	clHex                 // [0-9A-Fa-f]
	clBody                // [A-Za-z0-9_+/.-]: a byte of a random-looking word
	clLocal               // [A-Za-z0-9._%+-]: a byte of an e-mail local part
	clTrigger             // a byte without which no built-in detector can match
)

var class = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		var v uint8
		switch {
		case '0' <= c && c <= '9':
			v = clDigit | clWord | clHex | clBody | clLocal | clTrigger
		case 'A' <= c && c <= 'Z':
			v = clUpper | clWord | clBody | clLocal
			if c <= 'F' {
				v |= clHex
			}
		case 'a' <= c && c <= 'z':
			v = clLower | clWord | clBody | clLocal
			if c <= 'f' {
				v |= clHex
			}
		}
		switch c {
		case '_':
			v |= clWord | clBody | clLocal
		case '+', '-':
			v |= clBody | clLocal
		case '/':
			v |= clBody
		case '.':
			v |= clBody | clLocal
		case '%':
			v |= clLocal
		}
		// Every e-mail has '@'; phones, cards, IBANs, national ids and IP
		// addresses have digits; key=value secrets have ':' or '='; and the
		// token-like secrets (prefixed keys, JWTs, high-entropy strings)
		// have digits.
		switch c {
		case '@', ':', '=':
			v |= clTrigger
		}
		t[c] = v
	}
	return t
}()

func isDigit(c byte) bool { return class[c]&clDigit != 0 }
func isWord(c byte) bool  { return class[c]&clWord != 0 }
func isHex(c byte) bool   { return class[c]&clHex != 0 }
func isAlpha(c byte) bool { return class[c]&(clUpper|clLower) != 0 }
func isAlnum(c byte) bool { return class[c]&(clUpper|clLower|clDigit) != 0 }

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// normalise is the form of a value its token is computed from, so that the
// same value written differently correlates: an e-mail address in any case,
// a card or phone number with any grouping.
func normalise(kind, v string) string {
	v = strings.TrimSpace(v)
	switch kind {
	case KindEmail:
		return strings.ToLower(v)
	case KindPhone:
		return phoneDigits(v)
	case KindCard, KindAccount, KindSSN:
		if d := keep(v, clDigit, false); d != "" {
			return d
		}
	case KindIBAN, KindNINO:
		if d := keep(v, clDigit|clUpper|clLower, true); d != "" {
			return d
		}
	case KindIP:
		if a, err := netip.ParseAddr(strings.Trim(v, "[]")); err == nil {
			return a.WithZone("").String()
		}
	case KindSecret:
		if sp := strings.IndexByte(v, ' '); sp > 0 && isAuthScheme(v[:sp]) {
			return strings.TrimSpace(v[sp+1:])
		}
		return v
	}
	return strings.ToLower(strings.Join(strings.Fields(v), " "))
}

// keep returns the bytes of v in the given classes, upper-cased if asked.
func keep(v string, cl uint8, upper bool) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if class[c]&cl == 0 {
			continue
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// phoneDigits reduces a phone number to its digits, without the national
// trunk "(0)" written after a country code, with an international "00"
// prefix read as "+", and with the NANP country code 1 dropped, so that
// "+1 (415) 555-0132" and "415.555.0132" get one token.
func phoneDigits(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '(' && i+2 < len(v) && v[i+1] == '0' && v[i+2] == ')' && b.Len() > 0 {
			i += 2
			continue
		}
		if isDigit(c) {
			b.WriteByte(c)
		}
	}
	d := b.String()
	if len(d) > 2 && d[0] == '0' && d[1] == '0' {
		d = d[2:]
	}
	if len(d) == 11 && d[0] == '1' {
		d = d[1:]
	}
	return d
}

// isAuthScheme reports whether w names an HTTP authentication scheme, the
// part of an Authorization value that is kept readable.
func isAuthScheme(w string) bool {
	return oneOfFold(w, "bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey",
		"api-key", "hoba", "mutual", "vapid", "dpop", "gnap", "aws4-hmac-sha256")
}

// oneOfFold reports whether w is one of words, ignoring case, without
// allocating.
func oneOfFold(w string, words ...string) bool {
	for _, x := range words {
		if len(x) == len(w) && strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}
