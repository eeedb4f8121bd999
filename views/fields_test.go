package views

import (
	"encoding/json"
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
		{`{"status":"pending","items":[{"sku":"A1"}],"ok":true}`, "", []Field{{"Items", `[{"sku":"A1"}]`}, {"Ok", "yes"}, {"Status", "Awaiting approval"}}},
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
