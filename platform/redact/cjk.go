package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names and street addresses in Chinese, Japanese and Korean text, which
// is written without spaces between words (issue 28). A name is found
// next to a cue: an honorific after it (様, さん, 先生, 女士, 님, 씨) or a
// label before it (客户, 收件人, 氏名, 担当, 고객): two to four Han
// characters, or a Hangul word of two to four syllables. A Japanese street
// address is a district name and its block numbers (神宮前1-2-3,
// 南船場3丁目12番9号), the district read back to the ward or city before it.

var (
	cjkAfterCues  = []string{"様", "さま", "さん", "氏", "殿", "先生", "女士", "小姐", "君", "고객님", "님", "씨"}
	cjkBeforeCues = []string{"客户", "顾客", "收件人", "联系人", "姓名", "氏名", "名前", "担当", "收货人", "寄件人", "お客様",
		"会員", "用户", "고객", "성함", "이름", "수령인", "받는 분"}
)

type cjkCue struct {
	text  string
	after bool // the cue comes after the name
}

// cjkCues are the cues by their first character.
var cjkCues = func() map[rune][]cjkCue {
	m := map[rune][]cjkCue{}
	for _, c := range cjkAfterCues {
		r, _ := utf8.DecodeRuneInString(c)
		m[r] = append(m[r], cjkCue{c, true})
	}
	for _, c := range cjkBeforeCues {
		r, _ := utf8.DecodeRuneInString(c)
		m[r] = append(m[r], cjkCue{c, false})
	}
	return m
}()

// cjkFind appends the CJK names and Japanese street addresses in s.
func cjkFind(dst []Match, s string) []Match {
	has := false
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xE0 {
			has = true
			break
		}
	}
	if !has {
		return dst
	}
	meter.add(len(s))
	// One pass: at each non-ASCII character, the cues that start with it.
	for i := 0; i < len(s); {
		if s[i] < 0xE0 {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		for _, c := range cjkCues[r] {
			if !strings.HasPrefix(s[i:], c.text) {
				continue
			}
			if c.after {
				if st, ok := cjkNameBefore(s, i); ok {
					dst = append(dst, Match{Start: st, End: i, Kind: KindName})
				}
			} else if st, e, ok := cjkNameAfter(s, i+len(c.text)); ok {
				dst = append(dst, Match{Start: st, End: e, Kind: KindName})
			}
		}
		i += size
	}
	return jpStreets(dst, s)
}

func isHan(r rune) bool    { return unicode.Is(unicode.Han, r) }
func isHangul(r rune) bool { return unicode.Is(unicode.Hangul, r) }

// cjkNameBefore reads the name that ends at s[i], before an honorific.
func cjkNameBefore(s string, i int) (int, bool) {
	j := i
	if j > 0 && s[j-1] == ' ' {
		j-- // Korean: "김민준 님"
	}
	n, hangul := 0, false
	st := j
	for st > 0 && n < 4 {
		r, size := utf8.DecodeLastRuneInString(s[:st])
		if isHan(r) && !hangul {
			st -= size
			n++
			continue
		}
		if isHangul(r) && (n == 0 || hangul) {
			hangul = true
			st -= size
			n++
			continue
		}
		break
	}
	if n < 2 {
		return 0, false
	}
	if hangul && st > 0 {
		// A Hangul name is a word of its own.
		if r, _ := utf8.DecodeLastRuneInString(s[:st]); isHangul(r) {
			return 0, false
		}
	}
	if hangul && strings.HasPrefix(s[i:], "님") && strings.HasSuffix(s[st:j], "고객") {
		return 0, false
	}
	if r, _ := utf8.DecodeLastRuneInString(s[:st]); r == 'お' || r == 'ご' {
		return 0, false
	}
	return st, true
}

// cjkVerbs are characters that follow a Chinese name rather than end it.
const cjkVerbs = "要说的在是已先女小于和与请问反表来去对把给从买付退称打发收寄申提投"

// cjkNameAfter reads the name that starts after a label at s[i].
func cjkNameAfter(s string, i int) (int, int, bool) {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == ' ' || r == '　' || r == ':' || r == '：' || r == 'の' || r == '是' || r == '为' || r == '\u00a0' {
			i += size
			continue
		}
		break
	}
	st, e, n := i, i, 0
	hangul := false
	for e < len(s) && n < 4 {
		r, size := utf8.DecodeRuneInString(s[e:])
		if isHan(r) && !hangul || isHangul(r) && (n == 0 || hangul) {
			hangul = isHangul(r)
			if n == 2 && !hangul && strings.ContainsRune(cjkVerbs, r) {
				break
			}
			e += size
			n++
			continue
		}
		break
	}
	if n < 2 {
		return 0, 0, false
	}
	if hangul {
		if r, _ := utf8.DecodeRuneInString(s[e:]); isHangul(r) && !strings.HasPrefix(s[e:], "님") && !strings.HasPrefix(s[e:], "씨") {
			return 0, 0, false // a longer word: not a name
		}
	}
	return st, e, true
}

// jpStreets appends Japanese street addresses: a district and its block
// numbers.
func jpStreets(dst []Match, s string) []Match {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || i == 0 {
			continue
		}
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if !isHan(r) || strings.ContainsRune("年月日号番", r) {
			continue
		}
		// The block numbers.
		e, groups := i, 0
		for e < len(s) {
			d := e
			for d < len(s) && isDigit(s[d]) {
				d++
			}
			if d == e || d-e > 4 || groups == 0 && d-e > 2 {
				groups = 0 // not a block number: an order id, a year
				break
			}
			groups++
			e = d
			switch {
			case strings.HasPrefix(s[e:], "丁目"):
				e += len("丁目")
			case strings.HasPrefix(s[e:], "番地"):
				e += len("番地")
			case strings.HasPrefix(s[e:], "番"):
				e += len("番")
			case strings.HasPrefix(s[e:], "号"):
				e += len("号")
				goto end
			case e+1 < len(s) && s[e] == '-' && isDigit(s[e+1]):
				e++
			default:
				goto end
			}
		}
	end:
		if groups < 2 {
			i = e
			continue
		}
		// The district: Han characters back to a ward, city or prefecture.
		st := i
		for n := 0; st > 0 && n < 8; n++ {
			r, size := utf8.DecodeLastRuneInString(s[:st])
			if !isHan(r) || strings.ContainsRune("都道府県市区町村郡", r) {
				break
			}
			st -= size
		}
		dst = append(dst, Match{Start: st, End: e, Kind: KindAddress})
		i = e
	}
	return dst
}
