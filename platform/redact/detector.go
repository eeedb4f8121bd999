package redact

// A Detector finds one more kind of sensitive value in free text. Register
// one with WithDetector; NINO is an example.
type Detector interface {
	// Detect appends the matches it finds in s to dst, in increasing order
	// of Start and not overlapping each other, and returns the extended
	// slice. It must not keep s or dst.
	Detect(dst []Match, s string) []Match
}

// A Match is one sensitive value a Detector found.
type Match struct {
	Start, End int    // byte offsets of the value in the text
	Kind       string // token kind, such as "nino"; see Token for the allowed form
	// Value is the normalised value the token is computed from, so that
	// one value written in different ways gets one token. Empty means
	// the matched text, normalised as Token does for Kind.
	Value string

	plugged bool // found by a detector registered with WithDetector
}

// NINO detects UK National Insurance numbers: two prefix letters, six
// digits and a suffix letter A–D, upper case, written together or in pairs
// ("QQ 12 34 56 C"), in either case ("qq123456c"). Prefixes that HMRC never issues (D, F, I, Q, U, V
// first; D, F, I, O, Q, U, V second; BG, GB, KN, NK, NT, TN, ZZ) are not
// matched. New registers it by default.
var NINO Detector = ninoDetector{}

type ninoDetector struct{}

func (ninoDetector) Detect(dst []Match, s string) []Match {
	// The six digits are the rarest part: look for a digit, then step back.
	for i := 2; i+6 < len(s); i++ {
		if !isDigit(s[i]) || isDigit(s[i-1]) {
			continue
		}
		start := i - 2
		if s[i-1] == ' ' {
			start = i - 3
		}
		if start < 0 || !ninoPrefix(s[start], s[start+1]) || (start > 0 && isWord(s[start-1])) {
			continue
		}
		var norm [9]byte
		norm[0], norm[1] = upperASCII(s[start]), upperASCII(s[start+1])
		n, j := 2, i
		for pair := 0; pair < 3; pair++ {
			if j+1 >= len(s) || !isDigit(s[j]) || !isDigit(s[j+1]) {
				break
			}
			norm[n], norm[n+1] = s[j], s[j+1]
			n += 2
			j += 2
			if pair < 2 && j+1 < len(s) && s[j] == ' ' && isDigit(s[j+1]) {
				j++
			}
		}
		if n != 8 || (j < len(s) && isDigit(s[j])) {
			continue
		}
		if j+1 < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || upperASCII(s[j]) < 'A' || upperASCII(s[j]) > 'D' || (j+1 < len(s) && isWord(s[j+1])) {
			continue
		}
		norm[8] = upperASCII(s[j])
		if (isLowerASCII(s[start]) || isLowerASCII(s[start+1]) || isLowerASCII(s[j])) && j+1-start > 9 && !ninoCue(s, start) {
			// Lower case written apart ("ce 12 34 56 d") only after a cue.
			continue
		}
		dst = append(dst, Match{Start: start, End: j + 1, Kind: KindNINO, Value: string(norm[:])})
		i = j
	}
	return dst
}

func ninoPrefix(a, b byte) bool {
	a, b = upperASCII(a), upperASCII(b)
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return false
	}
	switch a {
	case 'D', 'F', 'I', 'Q', 'U', 'V':
		return false
	}
	switch b {
	case 'D', 'F', 'I', 'O', 'Q', 'U', 'V':
		return false
	}
	switch uint16(a)<<8 | uint16(b) {
	case 'B'<<8 | 'G', 'G'<<8 | 'B', 'K'<<8 | 'N', 'N'<<8 | 'K', 'N'<<8 | 'T', 'T'<<8 | 'N', 'Z'<<8 | 'Z':
		return false
	}
	return true
}

func isLowerASCII(c byte) bool { return 'a' <= c && c <= 'z' }

// ninoCue reports a National Insurance cue shortly before s[i].
func ninoCue(s string, i int) bool {
	w := s[max(0, i-48):i]
	for _, kw := range []string{"insurance", "nino", "ni number", "ni no", "ni:", "ni #", "ni#", "nin "} {
		if containsFold(w, kw) {
			return true
		}
	}
	return false
}
