package search

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	twoDec := func(minor int64) Amount { return Amount{Minor: minor} } // NotCurrencies: the other exponents
	tests := []struct {
		name, in  string
		actionID  string
		journeyID string
		words     string
		amounts   []Amount // Minor and, when set, Currencies; a nil Currencies is the two-decimal reading
		refusal   string
	}{
		{name: "order id", in: " ORD-1004 ", words: "ORD-1004"},
		{name: "action id", in: "act_01JABCDEF", actionID: "act_01JABCDEF"},
		{name: "journey id", in: "jrn_01JABCDEF", journeyID: "jrn_01JABCDEF"},
		{name: "plain number is an amount and a target", in: "2400", words: "2400",
			amounts: []Amount{twoDec(240000), {Minor: 2400, Currencies: []string{"JPY"}}, {Minor: 2400000, Currencies: []string{"KWD"}}, {Minor: 24000000, Currencies: []string{"CLF"}}}},
		{name: "dollars", in: "$2,400.00", amounts: []Amount{{Minor: 240000, Currencies: []string{"USD"}}}},
		{name: "grouped without sign", in: "2,400.00", amounts: []Amount{twoDec(240000), {Minor: 2400000, Currencies: []string{"KWD"}}, {Minor: 24000000, Currencies: []string{"CLF"}}}},
		{name: "code after", in: "2400 eur", amounts: []Amount{{Minor: 240000, Currencies: []string{"EUR"}}}},
		{name: "code before", in: "JPY 2400", amounts: []Amount{{Minor: 2400, Currencies: []string{"JPY"}}}},
		{name: "sign and its code", in: "$2400 USD", amounts: []Amount{{Minor: 240000, Currencies: []string{"USD"}}}},
		{name: "letters that are no currency", in: "ORD 1004", words: "ORD 1004"},
		{name: "name", in: "alice", words: "alice"},
		{name: "e-mail", in: "alice@example.com", words: "alice@example.com"},
		{name: "too many digits for an amount", in: "99999999999999999999999", words: "99999999999999999999999"},
		{name: "empty", in: "  ", refusal: "Type an order id"},
		{name: "too long", in: strings.Repeat("x", MaxLen+1), refusal: "too long"},
		{name: "just long enough", in: strings.Repeat("é", MaxLen), words: strings.Repeat("é", MaxLen)},
		{name: "not text", in: "ORD\xff", refusal: "not text"},
		{name: "bad grouping", in: "$2,40.00", refusal: "not an amount"},
		{name: "sign without number", in: "$abc", refusal: "not an amount"},
		{name: "euro sign without number", in: "€abc", refusal: "not an amount"},
		{name: "too many decimals", in: "$24.001", refusal: "2 decimals"},
		{name: "two currencies", in: "$2400 EUR", refusal: "two currencies"},
		{name: "two codes", in: "USD 2400 EUR", refusal: "not an amount"},
		{name: "unknown code with sign", in: "$2400 XXX", refusal: "not a currency"},
		{name: "comma in decimals", in: "2400.0,0", refusal: "not an amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.in)
			if tt.refusal != "" {
				var r *Refusal
				if !errors.As(err, &r) || !strings.Contains(r.Message, tt.refusal) {
					t.Fatalf("Parse(%q) = %+v, %v; want a refusal saying %q", tt.in, q, err, tt.refusal)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if q.ActionID != tt.actionID || q.JourneyID != tt.journeyID || q.Words != tt.words {
				t.Errorf("Parse(%q) = action %q journey %q words %q; want %q %q %q", tt.in, q.ActionID, q.JourneyID, q.Words, tt.actionID, tt.journeyID, tt.words)
			}
			if len(q.Amounts) != len(tt.amounts) {
				t.Fatalf("Parse(%q) amounts = %+v, want %+v", tt.in, q.Amounts, tt.amounts)
			}
			for i, want := range tt.amounts {
				got := q.Amounts[i]
				switch {
				case got.Minor != want.Minor:
					t.Errorf("Parse(%q) amount %d = %d minor, want %d", tt.in, i, got.Minor, want.Minor)
				case want.Currencies == nil && (got.Currencies != nil || !slices.Contains(got.NotCurrencies, "JPY") || slices.Contains(got.NotCurrencies, "USD")):
					t.Errorf("Parse(%q) amount %d = %+v, want every two-decimal currency", tt.in, i, got)
				case want.Currencies != nil && !slices.Contains(got.Currencies, want.Currencies[0]):
					t.Errorf("Parse(%q) amount %d currencies = %v, want %v among them", tt.in, i, got.Currencies, want.Currencies)
				}
			}
		})
	}
}
