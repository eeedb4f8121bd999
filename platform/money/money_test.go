package money

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParseCurrency(t *testing.T) {
	tests := []struct {
		code    string
		want    Currency
		wantErr bool
	}{
		{"USD", Currency{"USD", 2}, false},
		{"KWD", Currency{"KWD", 3}, false},
		{"JPY", Currency{"JPY", 0}, false},
		{"BHD", Currency{"BHD", 3}, false},
		{"ZZZ", Currency{}, true},
		{"usd", Currency{}, true},
		{"XXX", Currency{}, true},
		{"XTS", Currency{}, true},
		{"XAU", Currency{}, true},
		{"", Currency{}, true},
		{"USDX", Currency{}, true},
		{"IQD", Currency{"IQD", 3}, false},
		{"IDR", Currency{"IDR", 2}, false},
		{"COP", Currency{"COP", 2}, false},
		{"VES", Currency{"VES", 2}, false},
		{"SLE", Currency{"SLE", 2}, false},
		{"XAF", Currency{"XAF", 0}, false},
		{"CLF", Currency{"CLF", 4}, false},
		{"DEM", Currency{}, true},
		{"HRK", Currency{}, true},
		{"SLL", Currency{}, true},
		{"VEF", Currency{}, true},
	}
	for _, tt := range tests {
		got, err := ParseCurrency(tt.code)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseCurrency(%q) = %+v, %v; want %+v, error %v", tt.code, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrCurrency) {
			t.Errorf("ParseCurrency(%q) error %v is not ErrCurrency", tt.code, err)
		}
	}
}

func TestParseMinorRefusesEveryNonIntegerSpelling(t *testing.T) {
	for _, raw := range []string{
		`500000.0`, `1e5`, `1E5`, `5.0e5`, `"500000"`, `-1`, `-0`, `+5`, `05`, `9223372036854775808`,
		`18446744073709551616`, `9007199254740992`, `null`, `true`, `{}`, `[]`, ``, `0x10`, `1_000`,
	} {
		if n, err := ParseMinor([]byte(raw)); err == nil {
			t.Errorf("ParseMinor(%s) = %d, want refusal", raw, n)
		}
	}
	for raw, want := range map[string]int64{`0`: 0, `1`: 1, `240000`: 240000, ` 42 `: 42, `9007199254740991`: MaxMinor} {
		if n, err := ParseMinor([]byte(raw)); err != nil || n != want {
			t.Errorf("ParseMinor(%s) = %d, %v; want %d", raw, n, err, want)
		}
	}
}

// TestParseMinorAgreesWithEveryReader checks, over generated spellings of
// JSON numbers, that an accepted amount is the exact value any JSON reader
// (as arbitrary-precision decimal, as int64, as float64) takes from the
// same bytes, so the shown, policy and sent amounts cannot differ.
func TestParseMinorAgreesWithEveryReader(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		whole := rapid.StringMatching(`-?(0|[1-9][0-9]{0,20})`).Draw(t, "whole")
		frac := rapid.SampledFrom([]string{"", ".0", ".00", ".5", ".000001"}).Draw(t, "frac")
		exp := rapid.SampledFrom([]string{"", "e0", "e2", "E+1", "e-1"}).Draw(t, "exp")
		quoted := rapid.Bool().Draw(t, "quoted")
		raw := whole + frac + exp
		if quoted {
			raw = `"` + raw + `"`
		}
		n, err := ParseMinor([]byte(raw))
		if err != nil {
			return
		}
		if quoted || frac != "" || exp != "" || strings.HasPrefix(whole, "-") {
			t.Fatalf("ParseMinor(%s) = %d, want refusal", raw, n)
		}
		exact, ok := new(big.Int).SetString(raw, 10)
		if !ok || exact.Int64() != n || !exact.IsInt64() {
			t.Fatalf("ParseMinor(%s) = %d, exact value %v", raw, n, exact)
		}
		var asInt int64
		if err := json.Unmarshal([]byte(raw), &asInt); err != nil || asInt != n {
			t.Fatalf("json int64 reads %s as %d (%v), ParseMinor as %d", raw, asInt, err, n)
		}
		var asFloat float64
		if err := json.Unmarshal([]byte(raw), &asFloat); err != nil || int64(asFloat) != n {
			t.Fatalf("a float reader (JavaScript) reads %s as %v, ParseMinor as %d", raw, asFloat, n)
		}
	})
}

func TestFormat(t *testing.T) {
	tests := []struct {
		minor int64
		code  string
		want  string
	}{
		{240000, "USD", "$2,400.00"},
		{5, "USD", "$0.05"},
		{1000, "KWD", "1.000 KWD"},
		{5000, "JPY", "¥5,000"},
		{3550, "SEK", "35.50 SEK"},
		{123456789, "BHD", "123,456.789 BHD"},
		{-150, "EUR", "-€1.50"},
	}
	for _, tt := range tests {
		if got := Format(Amount{tt.minor, MustCurrency(tt.code)}); got != tt.want {
			t.Errorf("Format(%d %s) = %q, want %q", tt.minor, tt.code, got, tt.want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in      string
		code    string
		want    int64
		wantErr bool
	}{
		{"1000", "USD", 100000, false},
		{"1000.5", "USD", 100050, false},
		{"1000.500", "KWD", 1000500, false},
		{"1000.5", "JPY", 0, true},
		{"1000.123", "USD", 0, true},
		{"1,000", "USD", 0, true},
		{"-5", "USD", 0, true},
		{"$5", "USD", 0, true},
		{"", "USD", 0, true},
		{"99999999999999999999", "USD", 0, true},
		{fmt.Sprint(MaxMinor), "JPY", MaxMinor, false},
	}
	for _, tt := range tests {
		got, err := ParseDecimal(tt.in, MustCurrency(tt.code))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseDecimal(%q, %s) = %d, %v; want %d, error %v", tt.in, tt.code, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDecimalRoundTripsThroughParseDecimal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := MustCurrency(rapid.SampledFrom([]string{"USD", "KWD", "JPY", "CLF"}).Draw(t, "currency"))
		n := rapid.Int64Range(0, MaxMinor).Draw(t, "minor")
		s := Decimal(Amount{n, c}, false)
		back, err := ParseDecimal(s, c)
		if err != nil || back != n {
			t.Fatalf("ParseDecimal(Decimal(%d %s) = %q) = %d, %v", n, c.Code, s, back, err)
		}
	})
}

func TestFormatMicros(t *testing.T) {
	tests := []struct {
		micros int64
		code   string
		want   string
	}{
		{0, "USD", "$0.00"},
		{1, "USD", "$0.000001"},
		{1_500, "USD", "$0.0015"},
		{10_000, "USD", "$0.01"},
		{12_345_678, "USD", "$12.345678"},
		{1_234_500_000, "USD", "$1,234.50"},
		{-2_500_000, "USD", "-$2.50"},
		{math.MaxInt64, "USD", "$9,223,372,036,854.775807"},
		{math.MinInt64, "USD", "-$9,223,372,036,854.775808"},
		{1_500_000, "KWD", "1.500 KWD"},
		{1_234_567, "KWD", "1.234567 KWD"},
		{5_000_000_000, "JPY", "¥5,000"},
		{500_000, "JPY", "¥0.5"},
		{0, "JPY", "¥0"},
		{12_000_000, "CLF", "12.0000 CLF"},
		{-1_500_000, "EUR", "-€1.50"},
		{3_550_000, "SEK", "3.55 SEK"},
	}
	for _, tt := range tests {
		if got := FormatMicros(tt.micros, MustCurrency(tt.code)); got != tt.want {
			t.Errorf("FormatMicros(%d, %s) = %q, want %q", tt.micros, tt.code, got, tt.want)
		}
	}
}

func TestMicrosInput(t *testing.T) {
	tests := []struct {
		micros int64
		code   string
		want   string
	}{
		{0, "USD", "0.00"},
		{250_000_000, "USD", "250.00"},
		{1_234_500_000, "USD", "1234.50"},
		{1_500, "USD", "0.0015"},
		{-1_000_000, "USD", "-1.00"},
		{math.MinInt64, "USD", "-9223372036854.775808"},
		{1_500_000, "KWD", "1.500"},
		{5_000_000_000, "JPY", "5000"},
	}
	for _, tt := range tests {
		if got := MicrosInput(tt.micros, MustCurrency(tt.code)); got != tt.want {
			t.Errorf("MicrosInput(%d, %s) = %q, want %q", tt.micros, tt.code, got, tt.want)
		}
	}
}

// An amount in micro-units that is a whole number of minor units reads the
// same as that amount written by Format: there is one way to write money.
func TestFormatMicrosAgreesWithFormat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := MustCurrency(rapid.SampledFrom([]string{"USD", "KWD", "JPY", "CLF", "SEK"}).Draw(t, "currency"))
		scale := int64(math.Pow10(microExponent - c.Exponent))
		n := rapid.Int64Range(-math.MaxInt64/scale, math.MaxInt64/scale).Draw(t, "minor")
		if got, want := FormatMicros(n*scale, c), Format(Amount{n, c}); got != want {
			t.Fatalf("FormatMicros(%d, %s) = %q, want %q as Format writes it", n*scale, c.Code, got, want)
		}
	})
}

func TestParseMicros(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"250.00", 250_000_000, ""},
		{"250", 250_000_000, ""},
		{" 250.5 ", 250_500_000, ""},
		{"$12.34", 0, digitsMsg}, // strict: a currency sign is refused, not stripped
		{"12.34 USD", 0, digitsMsg},
		{"0", 0, ""},
		{"0.000001", 1, ""},
		{"1.123456", 1_123_456, ""},
		{"007.10", 7_100_000, ""},
		{"9223372036854.775807", math.MaxInt64, ""},
		{"9223372036854.775808", 0, "The amount is too large."},
		{"9223372036855", 0, "The amount is too large."},
		{"99999999999999999999", 0, "The amount is too large."},
		{"", 0, "Enter an amount, such as 250.00."},
		{"   ", 0, "Enter an amount, such as 250.00."},
		{"-1", 0, "The amount cannot be negative."},
		{"-0.5", 0, "The amount cannot be negative."},
		{"1.1234567", 0, "Use at most 6 decimal places: amounts are kept in millionths."},
		{"abc", 0, digitsMsg},
		{"1,000.00", 0, digitsMsg},
		{"1e3", 0, digitsMsg},
		{"+5", 0, digitsMsg},
		{"250.", 0, digitsMsg},
		{".5", 0, digitsMsg},
		{"1.2.3", 0, digitsMsg},
		{"١٢", 0, digitsMsg}, // digits, but not ASCII ones
		{"NaN", 0, digitsMsg},
	}
	for _, tt := range tests {
		got, msg := ParseMicros(tt.in)
		if got != tt.want || msg != tt.wantErr {
			t.Errorf("ParseMicros(%q) = %d, %q; want %d, %q", tt.in, got, msg, tt.want, tt.wantErr)
		}
	}
}

const digitsMsg = "Write the amount as digits with an optional decimal point, such as 250 or 250.00, without separators or currency."
