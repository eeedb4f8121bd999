// Package money is Warden's one way to read, compare and write amounts of
// money. An amount is a whole number of its currency's minor units (cents
// for USD, fils for KWD, yen for JPY) with an ISO 4217 currency: which
// codes are currencies in use comes from golang.org/x/text/currency
// (corrected where its data lags), the number of decimals from ISO 4217.
//
// Amounts reach Warden from agents as JSON numbers. They are parsed once,
// strictly, by ParseMinor: the value an approver is shown, the value that
// decides how many approvers are needed and the value the provider
// receives are the same number from the same parse.
//
//	c, err := money.ParseCurrency("KWD")       // refused: "ZZZ", "usd", "XXX"
//	n, err := money.ParseMinor(raw)            // refused: 500000.0, 1e5, "500000"
//	money.Format(money.Amount{Minor: n, Currency: c}) // "1.000 KWD" for n = 1000
package money

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/currency"
)

// MaxMinor is the largest amount Warden accepts: 2^53-1 minor units, so
// that every JSON reader, a JavaScript provider's included, reads the same
// integer Warden approved.
const MaxMinor int64 = 1<<53 - 1

// Currency is an ISO 4217 currency Warden accepts.
type Currency struct {
	Code     string // "USD"
	Exponent int    // digits after the decimal point: 2 for USD, 3 for KWD, 0 for JPY
}

// Amount is a quantity of money in minor units.
type Amount struct {
	Minor    int64
	Currency Currency
}

var codeRe = regexp.MustCompile(`^[A-Z]{3}$`)

// notMoney are ISO 4217 codes that name no spendable currency: testing, no
// currency, precious metals, bond-market units and special drawing rights.
var notMoney = map[string]bool{
	"XXX": true, "XTS": true, "XAU": true, "XAG": true, "XPT": true, "XPD": true,
	"XBA": true, "XBB": true, "XBC": true, "XBD": true, "XDR": true, "XSU": true, "XUA": true,
}

// Corrections to golang.org/x/text/currency's list of currencies in use,
// whose data lags ISO 4217: codes it lacks that are tender today, and codes
// it still lists that were withdrawn.
var (
	tenderSince = map[string]bool{"VES": true, "SLE": true, "MRU": true, "ZWG": true, "XCG": true}
	withdrawn   = map[string]bool{"HRK": true, "SLL": true, "VEF": true, "MRO": true, "CUC": true, "ANG": true}
)

// inUse is the set of codes of currencies that are legal tender today.
var inUse = func() map[string]bool {
	set := map[string]bool{}
	for it := currency.Query(currency.Date(time.Now())); it.Next(); {
		set[it.Unit().String()] = true
	}
	for c := range tenderSince {
		set[c] = true
	}
	for c := range withdrawn {
		delete(set, c)
	}
	return set
}()

// Minor units by ISO 4217. The Unicode locale data behind x/text rounds
// some currencies differently from ISO (IDR and COP to 0 decimals, IQD to
// 0), but agents send ISO minor units, so the exponent is ISO's: 0 and 3
// for these, 4 for the Chilean unit of account, 2 for every other.
var (
	isoZero  = map[string]bool{"BIF": true, "CLP": true, "DJF": true, "GNF": true, "ISK": true, "JPY": true, "KMF": true, "KRW": true, "PYG": true, "RWF": true, "UGX": true, "VND": true, "VUV": true, "XAF": true, "XOF": true, "XPF": true}
	isoThree = map[string]bool{"BHD": true, "IQD": true, "JOD": true, "KWD": true, "LYD": true, "OMR": true, "TND": true}
	isoFour  = map[string]bool{"CLF": true}
)

// OtherExponents lists, by exponent, the currencies whose minor unit is
// not a hundredth (0, 3 and 4 decimals); every other currency has 2. A
// search for "2400" with no currency reads 240000 minor units of the
// two-decimal currencies, 2400 of the zero-decimal ones, and so on.
func OtherExponents() map[int][]string {
	out := map[int][]string{}
	for e, set := range map[int]map[string]bool{0: isoZero, 3: isoThree, 4: isoFour} {
		for c := range set {
			out[e] = append(out[e], c)
		}
		slices.Sort(out[e])
	}
	return out
}

// ErrCurrency is returned for a code that is not an ISO 4217 currency.
var ErrCurrency = errors.New("not an ISO 4217 currency in use")

// ParseCurrency accepts the upper-case ISO 4217 code of a currency in use
// today (and the Chilean unit of account CLF, which invoices use).
func ParseCurrency(code string) (Currency, error) {
	if !codeRe.MatchString(code) || notMoney[code] || !(inUse[code] || isoFour[code]) {
		return Currency{}, fmt.Errorf("%q is %w", code, ErrCurrency)
	}
	c := Currency{Code: code, Exponent: 2}
	switch {
	case isoZero[code]:
		c.Exponent = 0
	case isoThree[code]:
		c.Exponent = 3
	case isoFour[code]:
		c.Exponent = 4
	}
	return c, nil
}

// MustCurrency is ParseCurrency for codes written in the program.
func MustCurrency(code string) Currency {
	c, err := ParseCurrency(code)
	if err != nil {
		panic(err)
	}
	return c
}

// integerRe is a non-negative JSON integer literal as the grammar writes
// it: no sign, fraction, exponent or leading zeros.
var integerRe = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// ErrNotWhole explains what ParseMinor accepts.
var ErrNotWhole = fmt.Errorf("must be a whole number of minor units written as a JSON integer (no fraction, exponent or quotes), from 0 to %d", MaxMinor)

// ParseMinor reads a JSON value as an amount in minor units. Only an
// integer literal between 0 and MaxMinor is accepted: 500000.0, 5e5,
// "500000", -1 and 2^63 are refused, so what Warden decides on is exactly
// what the provider will read.
func ParseMinor(raw []byte) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	if !integerRe.MatchString(s) {
		return 0, ErrNotWhole
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > MaxMinor {
		return 0, ErrNotWhole
	}
	return n, nil
}

// What a decimal amount can be wrong with; ParseDecimal and ParseMicros
// say it each in their own words.
var (
	errFormat   = errors.New("not digits with an optional decimal point")
	errDecimals = errors.New("too many decimals")
	errTooLarge = errors.New("too large")
)

// parseDecimal is the one strict reading of a typed amount: digits, an
// optional decimal point with digits after it, at most exponent decimals,
// at most max in the smallest unit. Nothing is stripped or guessed.
func parseDecimal(s string, exponent int, max int64) (int64, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || !digits(whole) || (dot && (frac == "" || !digits(frac))) {
		return 0, errFormat
	}
	if len(frac) > exponent {
		return 0, errDecimals
	}
	scale := int64(math.Pow10(exponent))
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > max/scale {
		return 0, errTooLarge
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", exponent-len(frac)), 10, 64)
	}
	if w*scale > max-f {
		return 0, errTooLarge
	}
	return w*scale + f, nil
}

// ParseDecimal reads an amount as people type it in a form, in the
// currency's major units: "1000", "1000.00", or "1000.500" for KWD. No
// separators, signs or symbols; no more decimals than the currency has.
func ParseDecimal(s string, c Currency) (int64, error) {
	n, err := parseDecimal(strings.TrimSpace(s), c.Exponent, MaxMinor)
	switch {
	case errors.Is(err, errFormat):
		return 0, fmt.Errorf("write the amount as digits with an optional decimal point, such as %s", Example(c))
	case errors.Is(err, errDecimals) && c.Exponent == 0:
		return 0, fmt.Errorf("%s has no decimals", c.Code)
	case errors.Is(err, errDecimals):
		return 0, fmt.Errorf("%s has %d decimals at most", c.Code, c.Exponent)
	case errors.Is(err, errTooLarge):
		return 0, errors.New("the amount is too large")
	}
	return n, nil
}

// ParseMicros reads an amount typed into a form field that has no
// currency (a budget's limit, a tool's unit cost): "250", "250.00", up to
// 6 decimals, kept in millionths of a unit, up to math.MaxInt64. It
// returns the amount, or the sentence to show next to the field. A
// currency sign is refused, not stripped: "$100" is a currency's amount
// typed into a field that has none.
func ParseMicros(raw string) (int64, string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return 0, "Enter an amount, such as 250.00."
	}
	if strings.HasPrefix(s, "-") {
		return 0, "The amount cannot be negative."
	}
	n, err := parseDecimal(s, 6, math.MaxInt64)
	switch {
	case errors.Is(err, errFormat):
		return 0, "Write the amount as digits with an optional decimal point, such as 250 or 250.00, without separators or currency."
	case errors.Is(err, errDecimals):
		return 0, "Use at most 6 decimal places: amounts are kept in millionths."
	case errors.Is(err, errTooLarge):
		return 0, "The amount is too large."
	}
	return n, ""
}

// Example is how an amount of 1000 is typed in currency c: "1000.00".
func Example(c Currency) string {
	if c.Exponent == 0 {
		return "1000"
	}
	return "1000." + strings.Repeat("0", c.Exponent)
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// symbols are written before amounts of the best-known currencies; the
// rest are written with their code after the amount ("1.000 KWD").
var symbols = map[string]string{
	"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹", "KRW": "₩",
	"CAD": "CA$", "AUD": "A$", "NZD": "NZ$", "MXN": "MX$",
}

// Format writes an amount for people with the currency's own number of
// decimals: "$2,400.00", "1.000 KWD", "¥5,000".
func Format(a Amount) string {
	return withCurrency(a.Minor < 0, Decimal(a, true), a.Currency)
}

// withCurrency writes a formatted absolute value with its sign and its
// currency: the symbol before it, or the code after it when the currency
// has no symbol.
func withCurrency(negative bool, number string, c Currency) string {
	var b strings.Builder
	if negative {
		b.WriteByte('-')
	}
	sym := symbols[c.Code]
	b.WriteString(sym)
	b.WriteString(number)
	if sym == "" && c.Code != "" {
		b.WriteByte(' ')
		b.WriteString(c.Code)
	}
	return b.String()
}

// microExponent is the number of decimals of a micro-unit: budgets, tool
// unit costs and journey costs are kept in millionths of a major unit, so
// the cost of one model call, often a fraction of a cent, adds up exactly.
const microExponent = 6

// FormatMicros writes an amount in micro-units of currency c for people:
// "$1,234.50", "$0.0015", "1.500 KWD". It shows the currency's own
// decimals, and more, up to six, when the amount has them, so nothing is
// rounded away.
func FormatMicros(micros int64, c Currency) string {
	return withCurrency(micros < 0, microsDecimal(micros, c, true), c)
}

// MicrosInput writes an amount in micro-units of currency c the way a
// form field takes it back: "250.00", "0.0015", "-1.00"; no symbol, code
// or separators.
func MicrosInput(micros int64, c Currency) string {
	s := microsDecimal(micros, c, false)
	if micros < 0 {
		return "-" + s
	}
	return s
}

// microsDecimal is Decimal for micro-units, without the zeros after the
// last significant decimal that the currency does not need.
func microsDecimal(micros int64, c Currency, group bool) string {
	s := Decimal(Amount{Minor: micros, Currency: Currency{Exponent: microExponent}}, group)
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if n := min(c.Exponent, microExponent); len(frac) < n {
		frac += strings.Repeat("0", n-len(frac))
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// Decimal writes the amount's absolute value in major units, grouped by
// thousands when group is set: "2,400.00" or "2400.00" (as a form takes it
// back).
func Decimal(a Amount, group bool) string {
	u := uint64(a.Minor)
	if a.Minor < 0 {
		u = uint64(-(a.Minor + 1)) + 1 // safe for math.MinInt64
	}
	s := strconv.FormatUint(u, 10)
	exp := a.Currency.Exponent
	if len(s) <= exp {
		s = strings.Repeat("0", exp-len(s)+1) + s
	}
	whole, frac := s[:len(s)-exp], s[len(s)-exp:]
	if group {
		whole = Group(whole)
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// Group puts thousands separators into a string of digits.
func Group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	lead := len(digits) % 3
	if lead > 0 {
		b.WriteString(digits[:lead])
	}
	for i := lead; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}
