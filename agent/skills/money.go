package skills

import (
	"strconv"
	"strings"
)

// currency describes how an ISO 4217 currency is written.
type currency struct {
	exponent int    // digits after the decimal point (minor units)
	symbol   string // written before the amount; "" writes the code after it
}

// currencies are the ISO codes Extract and FormatMoney know. Amounts in
// other currencies are not recognised rather than guessed.
var currencies = map[string]currency{
	"USD": {2, "$"}, "EUR": {2, "€"}, "GBP": {2, "£"}, "JPY": {0, "¥"},
	"CHF": {2, ""}, "CAD": {2, "CA$"}, "AUD": {2, "A$"}, "NZD": {2, "NZ$"},
	"SEK": {2, ""}, "NOK": {2, ""}, "DKK": {2, ""}, "PLN": {2, ""},
	"CZK": {2, ""}, "INR": {2, "₹"}, "MXN": {2, "MX$"}, "KRW": {0, "₩"},
}

// symbolCurrency maps what may stand before or after an amount to its ISO
// code. A bare "$" is read as US dollars.
var symbolCurrency = map[string]string{
	"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW",
	"ca$": "CAD", "c$": "CAD", "a$": "AUD", "au$": "AUD", "nz$": "NZD", "mx$": "MXN",
	"dollar": "USD", "dollars": "USD", "bucks": "USD", "euro": "EUR", "euros": "EUR",
	"pound": "GBP", "pounds": "GBP", "quid": "GBP", "yen": "JPY",
}

// FormatMoney writes an amount in minor units for people:
// FormatMoney(240000, "USD") = "$2,400.00", FormatMoney(3550, "SEK") =
// "35.50 SEK". An unknown currency is assumed to have two decimals.
func FormatMoney(minor int64, code string) string {
	c, ok := currencies[strings.ToUpper(code)]
	if !ok {
		c = currency{exponent: 2}
	}
	neg := minor < 0
	if neg {
		minor = -minor
	}
	digits := strconv.FormatInt(minor, 10)
	if len(digits) <= c.exponent {
		digits = strings.Repeat("0", c.exponent-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-c.exponent], digits[len(digits)-c.exponent:]
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(c.symbol)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	if c.symbol == "" {
		b.WriteByte(' ')
		b.WriteString(strings.ToUpper(code))
	}
	return b.String()
}

// parseAmount reads a written number ("2,400.00", "35,50", "1.234,56",
// "2400") as minor units with the given exponent. The separator followed
// by one or two final digits is the decimal mark; every other separator
// groups thousands and must be followed by exactly three digits. It fails
// when the number has more decimals than the currency allows or does not
// fit.
func parseAmount(s string, exponent int) (int64, bool) {
	last := strings.LastIndexAny(s, ".,")
	whole, frac := s, ""
	if last >= 0 && len(s)-last-1 <= 2 {
		whole, frac = s[:last], s[last+1:]
	}
	if frac == "" && last == len(s)-1 {
		return 0, false
	}
	// Every remaining separator groups thousands.
	var digits strings.Builder
	groups := strings.FieldsFunc(whole, func(r rune) bool { return r == '.' || r == ',' })
	for i, g := range groups {
		if g == "" || (i > 0 && len(g) != 3) || (i == 0 && len(groups) > 1 && len(g) > 3) {
			return 0, false
		}
		digits.WriteString(g)
	}
	if strings.Count(whole, ".")+strings.Count(whole, ",") != len(groups)-1 {
		return 0, false
	}
	if len(frac) > exponent {
		return 0, false
	}
	frac += strings.Repeat("0", exponent-len(frac))
	n := digits.String() + frac
	if n == "" || len(n) > 15 {
		return 0, false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
