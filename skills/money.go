package skills

import (
	"strconv"
	"strings"

	"github.com/wardenhq/warden/platform/money"
)

// currencies are the ISO codes Extract reads in free text. Amounts in
// other currencies are not recognised rather than guessed; their data
// (number of decimals) comes from package money.
var currencies = map[string]bool{
	"USD": true, "EUR": true, "GBP": true, "JPY": true, "CHF": true, "CAD": true, "AUD": true, "NZD": true,
	"SEK": true, "NOK": true, "DKK": true, "PLN": true, "CZK": true, "INR": true, "MXN": true, "KRW": true,
}

// exponent is the number of decimals of a currency Extract recognises.
func exponent(code string) (int, bool) {
	if !currencies[code] {
		return 0, false
	}
	c, err := money.ParseCurrency(code)
	return c.Exponent, err == nil
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
// "35.50 SEK", FormatMoney(1000, "KWD") = "1.000 KWD". A code that is not
// a currency is written after the amount with two decimals.
func FormatMoney(minor int64, code string) string {
	code = strings.ToUpper(code)
	c, err := money.ParseCurrency(code)
	if err != nil {
		c = money.Currency{Code: code, Exponent: 2}
	}
	return money.Format(money.Amount{Minor: minor, Currency: c})
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
