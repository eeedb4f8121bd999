package skills

import (
	"fmt"
	"reflect"
	"testing"
)

func minor(v int64) *int64 { return &v }

func TestExtract(t *testing.T) {
	tests := []struct {
		text string
		want Extracted
	}{
		// order ids
		{"Please refund order ORD-1004, the customer was charged twice",
			Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}, Reason: "a duplicate charge"}},
		{"where is order 1004?", Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}}},
		{"status of ord-1003", Extracted{OrderID: "ORD-1003", OrderIDs: []string{"ORD-1003"}}},
		{"ORD1009 and ord_1010", Extracted{OrderID: "ORD-1009", OrderIDs: []string{"ORD-1009", "ORD-1010"}}},
		{"Order #1005, order no. 1006, order number: 1007, ORDER ID 1008",
			Extracted{OrderID: "ORD-1005", OrderIDs: []string{"ORD-1005", "ORD-1006", "ORD-1007", "ORD-1008"}}},
		{"order ORD-1004 (order 1004 in the old system)", Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}}},
		{"we shipped 1004 items today", Extracted{}},
		{"an order of 12 items", Extracted{}},
		{"order 2024-05-01 was a Wednesday", Extracted{}},
		{"my record1004 is fine", Extracted{}},
		{"ORD-12 is too short", Extracted{}},
		// amounts
		{"refund $2,400.00 on ORD-1004",
			Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}, AmountMinor: minor(240000), Currency: "USD"}},
		{"refund 2400 USD", Extracted{AmountMinor: minor(240000), Currency: "USD"}},
		{"refund €35.50", Extracted{AmountMinor: minor(3550), Currency: "EUR"}},
		{"refund 35,50 EUR", Extracted{AmountMinor: minor(3550), Currency: "EUR"}},
		{"refund EUR 1.234,56", Extracted{AmountMinor: minor(123456), Currency: "EUR"}},
		{"refund 2.400 eur", Extracted{AmountMinor: minor(240000), Currency: "EUR"}},
		{"£20 back please", Extracted{AmountMinor: minor(2000), Currency: "GBP"}},
		{"¥5000", Extracted{AmountMinor: minor(5000), Currency: "JPY"}},
		{"20 dollars", Extracted{AmountMinor: minor(2000), Currency: "USD"}},
		{"US$ 12.5", Extracted{AmountMinor: minor(1250), Currency: "USD"}},
		{"CHF 99.90", Extracted{AmountMinor: minor(9990), Currency: "CHF"}},
		{"a partial refund of 35.50 for ORD-1004",
			Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}, AmountMinor: minor(3550)}},
		{"refund $20 of the $2,400.00", Extracted{AmountMinor: minor(2000), Currency: "USD"}},
		// near misses: not amounts
		{"call me on +1 555-123-4567", Extracted{}},
		{"delivered on 12/05/2024 at 10:30", Extracted{}},
		{"refund ORD-1004 USD", Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}}},
		{"¥50.5", Extracted{}},       // yen have no decimals
		{"refund 1004", Extracted{}}, // a bare integer could be an order number
		{"SKU 123456 costs a lot", Extracted{}},
		{"$5-10 discount", Extracted{}},
		// e-mail addresses, change requests, reasons, messages
		{"email jane.doe+vip@example.com and JANE.DOE+vip@example.com about ORD-1004",
			Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}, Emails: []string{"jane.doe+vip@example.com"}}},
		{"cc ops@example.org, jane@example.com", Extracted{Emails: []string{"ops@example.org", "jane@example.com"}}},
		{"can you change the shipping address for ORD-1001 to 12 Elm St",
			Extracted{OrderID: "ORD-1001", OrderIDs: []string{"ORD-1001"}, Change: "change the shipping address to 12 Elm St"}},
		{"Please switch ORD-1001 to express shipping, thanks!",
			Extracted{OrderID: "ORD-1001", OrderIDs: []string{"ORD-1001"}, Change: "switch to express shipping"}},
		{"Customer moved. Update the address on order 1001 to 4 Oak Ave. Thank you",
			Extracted{OrderID: "ORD-1001", OrderIDs: []string{"ORD-1001"}, Change: "update the address to 4 Oak Ave"}},
		{"ship it to 9 Pine Rd instead, order #1001",
			Extracted{OrderID: "ORD-1001", OrderIDs: []string{"ORD-1001"}, Change: "ship it to 9 Pine Rd instead"}},
		{"the parcel for ORD-1005 never arrived",
			Extracted{OrderID: "ORD-1005", OrderIDs: []string{"ORD-1005"}, Reason: "an order that never arrived"}},
		{"ORD-1006 arrived damaged", Extracted{OrderID: "ORD-1006", OrderIDs: []string{"ORD-1006"}, Reason: "a damaged item"}},
		{"customer got overcharged", Extracted{Reason: "an overcharge"}},
		{"refund ORD-1004 because the size runs small, please",
			Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}, Reason: "the size runs small"}},
		{"email the customer of ORD-1004 that their parcel is delayed, thanks",
			Extracted{OrderID: "ORD-1004", OrderIDs: []string{"ORD-1004"}, Reason: "a late delivery", Message: "Their parcel is delayed."}},
		{"notify the customer: we are looking into it!", Extracted{Message: "We are looking into it!"}},
		{"tell the customer we deliver at 10:30", Extracted{}},
		{"", Extracted{}},
	}
	for _, tt := range tests {
		if got := Extract(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Extract(%q) =\n  %s\nwant\n  %s", tt.text, show(got), show(tt.want))
		}
	}
}

func show(e Extracted) string {
	amount := "nil"
	if e.AmountMinor != nil {
		amount = fmt.Sprint(*e.AmountMinor)
	}
	return fmt.Sprintf("ids=%q amount=%s %q emails=%q change=%q reason=%q message=%q",
		e.OrderIDs, amount, e.Currency, e.Emails, e.Change, e.Reason, e.Message)
}

func TestNormalizeOrderID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ORD-1004", "ORD-1004"}, {"ord1004", "ORD-1004"}, {" ord_1004 ", "ORD-1004"}, {"1004", "ORD-1004"},
		{"ORD-1004x", ""}, {"order 1004", ""}, {"12", ""}, {"", ""}, {"1004-5", ""},
	}
	for _, tt := range tests {
		if got := NormalizeOrderID(tt.in); got != tt.want {
			t.Errorf("NormalizeOrderID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	tests := []struct {
		minor int64
		code  string
		want  string
	}{
		{240000, "USD", "$2,400.00"},
		{3550, "EUR", "€35.50"},
		{5, "GBP", "£0.05"},
		{0, "USD", "$0.00"},
		{123456789, "usd", "$1,234,567.89"},
		{5000, "JPY", "¥5,000"},
		{3550, "SEK", "35.50 SEK"},
		{3550, "XYZ", "35.50 XYZ"},
		{-3550, "USD", "-$35.50"},
	}
	for _, tt := range tests {
		if got := FormatMoney(tt.minor, tt.code); got != tt.want {
			t.Errorf("FormatMoney(%d, %q) = %q, want %q", tt.minor, tt.code, got, tt.want)
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in       string
		exponent int
		want     int64
		ok       bool
	}{
		{"2,400.00", 2, 240000, true},
		{"2400", 2, 240000, true},
		{"35,50", 2, 3550, true},
		{"1.234,56", 2, 123456, true},
		{"1,234,567", 2, 123456700, true},
		{"12.5", 2, 1250, true},
		{"5000", 0, 5000, true},
		{"50.5", 0, 0, false},
		{"1,23,456", 2, 0, false}, // a thousands group must have three digits
		{"1234,567", 2, 0, false},
		{"9999999999999999", 2, 0, false}, // too large
	}
	for _, tt := range tests {
		got, ok := parseAmount(tt.in, tt.exponent)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseAmount(%q, %d) = %d, %v, want %d, %v", tt.in, tt.exponent, got, ok, tt.want, tt.ok)
		}
	}
}
