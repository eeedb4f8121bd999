package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseDate reports the end of a date starting at s[i], in any of the
// common forms: 04/03/1946, 4.3.46, 1946-03-04, 4 March 1946, 4. März
// 1946, 4 de marzo de 1946, 1er mai 1980, March 4, 1946, Mar 4th 1946.
func parseDate(s string, i int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	if isDigit(s[i]) {
		if e, ok := numericDate(s, i); ok {
			return e, true
		}
		if e, ok := cjkDate(s, i); ok {
			return e, true
		}
		return dayMonthYear(s, i)
	}
	return monthDayYear(s, i)
}

// digitsAt returns the value and end of the run of digits at s[i].
func digitsAt(s string, i int) (v, end int) {
	end = i
	for end < len(s) && isDigit(s[end]) && end-i < 5 {
		v = v*10 + int(s[end]-'0')
		end++
	}
	return v, end
}

// boundary reports whether s[e] (or the end) ends a word.
func boundary(s string, e int) bool {
	if e < len(s) && s[e] >= utf8.RuneSelf {
		r, _ := utf8.DecodeRuneInString(s[e:])
		return isCJK(r) || !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}
	return e >= len(s) || !isWord(s[e])
}

// cjkDate: "1988年3月12日", "1988년 3월 12일".
func cjkDate(s string, i int) (int, bool) {
	y, e := digitsAt(s, i)
	if e-i != 4 || y < 1800 || y > 2200 {
		return 0, false
	}
	for n, unit := range [][2]string{{"年", "년"}, {"月", "월"}, {"日", "일"}} {
		switch {
		case strings.HasPrefix(s[e:], unit[0]):
			e += len(unit[0])
		case strings.HasPrefix(s[e:], unit[1]):
			e += len(unit[1])
		default:
			return 0, false
		}
		if n == 2 {
			break
		}
		if e < len(s) && s[e] == ' ' {
			e++
		}
		v, d := digitsAt(s, e)
		if d == e || d-e > 2 || v < 1 || n == 0 && v > 12 || n == 1 && v > 31 {
			return 0, false
		}
		e = d
	}
	return e, true
}

func numericDate(s string, i int) (int, bool) {
	a, e1 := digitsAt(s, i)
	n1 := e1 - i
	if e1 >= len(s) || n1 == 0 {
		return 0, false
	}
	sep := s[e1]
	if sep != '/' && sep != '.' && sep != '-' {
		return 0, false
	}
	b, e2 := digitsAt(s, e1+1)
	n2 := e2 - e1 - 1
	if n2 < 1 || n2 > 2 || e2 >= len(s) || s[e2] != sep {
		return 0, false
	}
	c, e3 := digitsAt(s, e2+1)
	n3 := e3 - e2 - 1
	if !boundary(s, e3) {
		return 0, false
	}
	switch {
	case n1 == 4 && (n3 == 1 || n3 == 2): // Y-M-D
		if b >= 1 && b <= 12 && c >= 1 && c <= 31 {
			return e3, true
		}
	case n1 <= 2 && (n3 == 4 || n3 == 2): // D/M/Y or M/D/Y
		if a >= 1 && b >= 1 && (a <= 12 && b <= 31 || b <= 12 && a <= 31) {
			return e3, true
		}
	}
	return 0, false
}

// monthAt reports the end of a month name at s[i], with an optional '.'.
func monthAt(s string, i int) (int, bool) {
	e := i
	for e < len(s) && e-i < 26 {
		c := s[e]
		if c < utf8.RuneSelf {
			if !isAlpha(c) {
				break
			}
			e++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[e:])
		e += size
	}
	if e == i || lookupWord(s[i:e])&lxMonth == 0 {
		return 0, false
	}
	if e < len(s) && s[e] == '.' {
		e++
	}
	return e, true
}

// skipSpaces skips spaces and the given filler words (lower case) at s[i].
func skipFill(s string, i int, fillers ...string) int {
	for {
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == ',') {
			j++
		}
		matched := false
		for _, f := range fillers {
			if len(s)-j > len(f) && strings.EqualFold(s[j:j+len(f)], f) && s[j+len(f)] == ' ' {
				j += len(f)
				matched = true
				break
			}
		}
		if !matched {
			return j
		}
		i = j
	}
}

// yearAt reports the end of a four-digit year at s[i].
func yearAt(s string, i int) (int, bool) {
	y, e := digitsAt(s, i)
	if e-i != 4 || y < 1800 || y > 2200 || !boundary(s, e) {
		return 0, false
	}
	return e, true
}

// dayMonthYear: "4 March 1946", "4. März 1946", "4th of March 1946",
// "4 de marzo de 1946", "1er mai 1980".
func dayMonthYear(s string, i int) (int, bool) {
	d, e := digitsAt(s, i)
	if e-i > 2 || d < 1 || d > 31 {
		return 0, false
	}
	for _, suf := range []string{"st", "nd", "rd", "th", "er", "."} {
		if strings.HasPrefix(s[e:], suf) {
			e += len(suf)
			break
		}
	}
	j := skipFill(s, e, "of", "de")
	if j == e {
		return 0, false
	}
	me, ok := monthAt(s, j)
	if !ok {
		return 0, false
	}
	return yearAt(s, skipFill(s, me, "de", "del"))
}

// monthDayYear: "March 4, 1946", "Mar 4th 1946".
func monthDayYear(s string, i int) (int, bool) {
	me, ok := monthAt(s, i)
	if !ok {
		return 0, false
	}
	j := skipFill(s, me)
	d, e := digitsAt(s, j)
	if e == j || e-j > 2 || d < 1 || d > 31 {
		// "March 1946" is not a date of birth, but a month and year.
		return 0, false
	}
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if strings.HasPrefix(s[e:], suf) {
			e += len(suf)
			break
		}
	}
	return yearAt(s, skipFill(s, e))
}
