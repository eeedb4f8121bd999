package views

import (
	"encoding/json"
	"testing"

	"github.com/wardenhq/warden/changes"
)

// TestChangeDiffNamesSettings: the second admin reads each setting in the
// forms' words, not the value's JSON field names ("shown", "rpm").
func TestChangeDiffNamesSettings(t *testing.T) {
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	tests := []struct {
		name          string
		before, after any
		want          []ChangeDiffRow // every row, in order
	}{
		{"threshold", changes.Threshold{Currency: "USD", Set: true, Minor: 100000, Shown: "$1,000.00"},
			changes.Threshold{Currency: "USD", Set: true, Minor: 100000000, Shown: "$1,000,000.00"},
			[]ChangeDiffRow{
				{Field: "currency", Label: "currency", Before: "USD", After: "USD"},
				{Field: "shown", Label: "threshold (two approvers from)", Before: "$1,000.00", After: "$1,000,000.00", Changed: true},
			}},
		{"budget", changes.Budget{Exists: true, Period: "day", LimitMicros: 1, AlertPercent: 80, Shown: "$10.00"},
			changes.Budget{Exists: true, Period: "day", LimitMicros: 2, AlertPercent: 90, Shown: "$500.00"},
			[]ChangeDiffRow{
				{Field: "alert percent", Label: "alert at (% of the limit)", Before: "80", After: "90", Changed: true},
				{Field: "period", Label: "period", Before: "day", After: "day"},
				{Field: "shown", Label: "limit", Before: "$10.00", After: "$500.00", Changed: true},
			}},
		{"key rate", changes.KeyRate{RPM: 60, TPM: 1000}, changes.KeyRate{RPM: 0, TPM: 1000},
			[]ChangeDiffRow{
				{Field: "rpm", Label: "requests a minute (0: no limit)", Before: "60", After: "0", Changed: true},
				{Field: "tpm", Label: "tokens a minute (0: no limit)", Before: "1000", After: "1000"},
			}},
		{"key expiry", changes.KeyExpiryValue{ExpiresAt: "2027-01-31T00:00:00Z"}, changes.KeyExpiryValue{ExpiresAt: changes.Never},
			[]ChangeDiffRow{
				{Field: "expires at", Label: "expires (UTC)", Before: "2027-01-31T00:00:00Z", After: "never", Changed: true},
			}},
	}
	for _, tt := range tests {
		got := ChangeDiff(raw(tt.before), raw(tt.after))
		if len(got) != len(tt.want) {
			t.Errorf("%s: ChangeDiff = %+v, want %+v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: row %d = %+v, want %+v", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}
