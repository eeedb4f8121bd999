// Package search finds what one typed line names — an action or journey
// by id, the actions on an order (any target), of an amount, of a key, or
// asked or decided by a person — among the actions, journeys and audit
// events a viewer may see. Every lookup reads an index in the lists'
// order and stops at a few rows, so a search costs the same at a million
// actions as at ten.
//
// The console's header search drives it:
//
//	q, err := search.Parse(r.FormValue("q")) // a *Refusal says what to type instead
//	res, err := search.Run(ctx, db.Read(), redactor, search.Scope{TenantIDs: ids, Journeys: true}, q)
package search

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/platform/money"
)

// MaxLen is the longest search, in characters: longer than any order id,
// amount, name or e-mail, and short enough to keep out pasted documents.
const MaxLen = 200

// Query is a parsed search.
type Query struct {
	Text      string // as typed, trimmed
	ActionID  string // "act_…": that action
	JourneyID string // "jrn_…": that journey
	// Amounts are the amounts the text can mean, one per group of
	// currencies: "2400" is 240000 cents of a two-decimal currency, or
	// 2400 yen; "$2,400.00" is 240000 US cents only.
	Amounts []Amount
	// Words is the text as a target ("ORD-1004") and as the start of a
	// person's name or e-mail or a key's name; empty for an id.
	Words string
}

// Amount is one reading of a typed amount.
type Amount struct {
	Minor         int64
	Currencies    []string // only these; nil for any not in NotCurrencies
	NotCurrencies []string
}

// Refusal is what was typed wrong, as a sentence for the page.
type Refusal struct{ Message string }

func (r *Refusal) Error() string { return r.Message }

var (
	idRe = regexp.MustCompile(`^(act|jrn)_[0-9A-Za-z_]{1,80}$`)
	// amountRe is what reads as an amount: an optional currency code or
	// sign, digits with separators and decimals, an optional code after.
	amountRe = regexp.MustCompile(`^(?:([A-Za-z]{3})\s*)?([$€£¥])?\s*([0-9][0-9,.]*)\s*([A-Za-z]{3})?$`)
	// grouped is a whole part written with thousands separators.
	grouped = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+$`)
	signs   = map[string]string{"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
)

// Parse reads a search as typed. An empty or overlong search, or one that
// starts like an amount but is not one ("$2,40.00"), is a *Refusal.
func Parse(raw string) (Query, error) {
	text := strings.TrimSpace(raw)
	switch {
	case !utf8.ValidString(text):
		return Query{}, &Refusal{"The search is not text Warden can read; type it again."}
	case text == "":
		return Query{}, &Refusal{"Type an order id (or any target), an amount such as $2,400.00, an action or journey id, a key's name or a person's name or e-mail."}
	case utf8.RuneCountInString(text) > MaxLen:
		return Query{}, &Refusal{"The search is too long: type at most 200 characters, such as an order id or a name."}
	}
	q := Query{Text: text}
	if idRe.MatchString(text) {
		if strings.HasPrefix(text, "act_") {
			q.ActionID = text
		} else {
			q.JourneyID = text
		}
		return q, nil
	}
	q.Words = text
	m := amountRe.FindStringSubmatch(text)
	if m == nil {
		for sign := range signs {
			if strings.HasPrefix(text, sign) {
				return Query{}, amountRefusal(text)
			}
		}
		return q, nil // a target or a name
	}
	codeBefore, sign, number, codeAfter := m[1], m[2], m[3], m[4]
	amounts, err := readAmount(codeBefore, sign, number, codeAfter)
	switch {
	case err == nil:
		q.Amounts = amounts
		if sign != "" || codeBefore != "" || codeAfter != "" || strings.ContainsAny(number, ",.") {
			q.Words = "" // "$2,400.00" is no order id or name; "2400" may be either
		}
	case sign == "" && !isCurrency(codeBefore) && !isCurrency(codeAfter) && (codeBefore != "" || codeAfter != ""):
		// "ORD 1004": letters that are no currency make a target.
	case sign == "" && codeBefore == "" && codeAfter == "" && !strings.ContainsAny(number, ",."):
		// Digits alone too large for an amount: a target still.
	default:
		return Query{}, err
	}
	return q, nil
}

func isCurrency(code string) bool {
	_, err := money.ParseCurrency(strings.ToUpper(code))
	return code != "" && err == nil
}

func amountRefusal(text string) *Refusal {
	return &Refusal{"“" + text + "” is not an amount Warden can read: write it like 2400, 2,400.00, $2,400.00 or 2400 EUR."}
}

// readAmount reads the parts amountRe found: code before, sign, number,
// code after.
func readAmount(codeBefore, sign, number, codeAfter string) ([]Amount, error) {
	text := strings.TrimSpace(codeBefore + " " + sign + number + " " + codeAfter)
	code := strings.ToUpper(codeBefore)
	if codeAfter != "" {
		if code != "" {
			return nil, amountRefusal(text)
		}
		code = strings.ToUpper(codeAfter)
	}
	if code != "" && !isCurrency(code) {
		return nil, &Refusal{"“" + code + "” is not a currency Warden knows; write an ISO code such as USD or EUR."}
	}
	if s, ok := signs[sign]; ok {
		if code != "" && code != s {
			return nil, &Refusal{"“" + text + "” names two currencies; write one, such as $2,400.00 or 2400 EUR."}
		}
		code = s
	}
	whole, frac, _ := strings.Cut(number, ".")
	if strings.Contains(whole, ",") {
		if !grouped.MatchString(whole) {
			return nil, amountRefusal(text)
		}
		whole = strings.ReplaceAll(whole, ",", "")
	}
	if strings.Contains(frac, ",") {
		return nil, amountRefusal(text)
	}
	plain := whole
	if strings.Contains(number, ".") {
		plain += "." + frac
	}
	if code != "" {
		c, _ := money.ParseCurrency(code)
		minor, err := money.ParseDecimal(plain, c)
		if err != nil {
			return nil, &Refusal{"“" + text + "” is not an amount in " + code + ": " + err.Error() + "."}
		}
		return []Amount{{Minor: minor, Currencies: []string{code}}}, nil
	}
	// No currency: each group of currencies by its decimals.
	others := money.OtherExponents()
	var out []Amount
	var not []string
	for _, e := range []int{0, 3, 4} {
		not = append(not, others[e]...)
	}
	if minor, err := money.ParseDecimal(plain, money.Currency{Code: "USD", Exponent: 2}); err == nil {
		out = append(out, Amount{Minor: minor, NotCurrencies: not})
	}
	for _, e := range []int{0, 3, 4} {
		if minor, err := money.ParseDecimal(plain, money.Currency{Code: others[e][0], Exponent: e}); err == nil {
			out = append(out, Amount{Minor: minor, Currencies: others[e]})
		}
	}
	if len(out) == 0 {
		return nil, amountRefusal(text)
	}
	return out, nil
}
