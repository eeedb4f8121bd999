package views

import (
	"testing"
	"time"
)

func TestStampAndAgo(t *testing.T) {
	now := time.Date(2026, 3, 9, 12, 5, 7, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name, got, want string
	}{
		{"Stamp names UTC", Stamp(now.In(paris)), "2026-03-09 12:05 UTC"},
		{"Stamp zero", Stamp(time.Time{}), "—"},
		{"StampSeconds", StampSeconds(now), "2026-03-09 12:05:07 UTC"},
		{"Ago seconds", Ago(now.Add(-20*time.Second), now), "just now"},
		{"Ago minutes", Ago(now.Add(-5*time.Minute), now), "5 min ago"},
		{"Ago hours", Ago(now.Add(-3*time.Hour), now), "3 h ago"},
		{"Ago days", Ago(now.Add(-72*time.Hour), now), "3 days ago"},
		{"Ago future", Ago(now.Add(23*time.Hour+30*time.Minute), now), "in 23 h"},
		{"Ago past a month", Ago(now.AddDate(0, -2, 0), now), ""},
		{"Ago zero", Ago(time.Time{}, now), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
