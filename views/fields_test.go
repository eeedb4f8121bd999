package views

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLabelledFields(t *testing.T) {
	tests := []struct {
		raw, currency string
		want          []Field
	}{
		{`{"refund_id":"rf_1","order_id":"ORD-1004","status":"refunded","amount_minor":240000,"currency":"USD","account_last4":"9182","created_at":"2026-03-01T12:00:00Z"}`, "", []Field{
			{"Account (last 4)", "9182"}, {"Amount", "$2,400.00"}, {"Created", "2026-03-01 12:00:00 UTC"},
			{"Order id", "ORD-1004"}, {"Refund id", "rf_1"}, {"Status", "Refunded"},
		}},
		{`{"amount_minor":5000,"currency":"JPY"}`, "", []Field{{"Amount", "¥5,000"}}},
		{`{"amount_minor":1234,"currency":"BHD"}`, "", []Field{{"Amount", "1.234 BHD"}}},
		{`{"amount_minor":4550}`, "EUR", []Field{{"Amount", "€45.50"}}},
		{`{"status":"pending","tags":["a","b"],"ok":true,"refunded_minor":0,"currency":"USD"}`, "", []Field{{"Ok", "yes"}, {"Refunded", "$0.00"}, {"Status", "Awaiting approval"}, {"Tags", "a, b"}}},
		{`{"address":{"city":"Bristol","postcode":"BS1"}}`, "", []Field{{"Address", "City: Bristol; Postcode: BS1"}}},
		{`[1,2]`, "", nil},
		{``, "", nil},
	}
	for _, tt := range tests {
		got := LabelledFields(json.RawMessage(tt.raw), tt.currency)
		if len(got) != len(tt.want) {
			t.Errorf("LabelledFields(%s) = %v, want %v", tt.raw, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("LabelledFields(%s)[%d] = %v, want %v", tt.raw, i, got[i], tt.want[i])
			}
		}
	}
}

// An order's items are a table, one row an item, its prices as money in
// the order's currency — not JSON with unit_minor: 189900.
func TestLabelledFieldsItemsTable(t *testing.T) {
	raw := `{"order_id":"ORD-1004","currency":"USD","amount_minor":240000,"refunded_minor":240000,"items":[` +
		`{"sku":"DSK-900","name":"Standing desk","quantity":1,"unit_minor":189900},` +
		`{"sku":"CHR-450","name":"Ergonomic chair","quantity":1,"unit_minor":50100}]}`
	fs := LabelledValues(json.RawMessage(raw), "")
	var items *Table
	var refunded string
	for _, f := range fs {
		switch f.Label {
		case "Items":
			items = f.Table
			if f.Value != "" {
				t.Errorf("Items value %q, want it shown as a table only", f.Value)
			}
		case "Refunded":
			refunded = f.Value
		}
	}
	if refunded != "$2,400.00" {
		t.Errorf("Refunded = %q, want $2,400.00", refunded)
	}
	if items == nil {
		t.Fatalf("LabelledFields(%s) has no Items table: %+v", raw, fs)
	}
	wantCols := []string{"Name", "SKU", "Quantity", "Unit price"}
	wantRows := [][]string{{"Standing desk", "DSK-900", "1", "$1,899.00"}, {"Ergonomic chair", "CHR-450", "1", "$501.00"}}
	if strings.Join(items.Columns, "|") != strings.Join(wantCols, "|") {
		t.Errorf("columns %v, want %v", items.Columns, wantCols)
	}
	for i, want := range wantRows {
		if i >= len(items.Rows) || strings.Join(items.Rows[i], "|") != strings.Join(want, "|") {
			t.Errorf("rows %v, want %v", items.Rows, wantRows)
			break
		}
	}
}

// Without a table, the items are written row by row, never as JSON.
func TestLabelledFieldsItemsAsText(t *testing.T) {
	raw := `{"amount_minor":189900,"currency":"USD","items":[{"sku":"DSK-900","name":"Standing desk","quantity":1,"unit_minor":189900}]}`
	fs := LabelledFields(json.RawMessage(raw), "")
	want := "Name: Standing desk, SKU: DSK-900, Quantity: 1, Unit price: $1,899.00"
	if len(fs) != 2 || fs[1].Label != "Items" || fs[1].Value != want {
		t.Errorf("LabelledFields(%s) = %v, want Items %q", raw, fs, want)
	}
}
