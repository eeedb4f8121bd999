package views

import (
	"testing"
	"time"
)

func TestExpiresInAndAge(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		d              time.Duration
		expires, since string
	}{
		{-time.Second, "expired", "just now"},
		{0, "expired", "just now"},
		{30 * time.Second, "in under a minute", "just now"},
		{time.Minute, "in 1m", "1m ago"},
		{59*time.Minute + 59*time.Second, "in 59m", "59m ago"},
		{time.Hour, "in 1h 0m", "1h 0m ago"},
		{23*time.Hour + 59*time.Minute + 30*time.Second, "in 23h 59m", "23h 59m ago"},
		{24 * time.Hour, "in 1d 0h", "1d 0h ago"},
		{50*time.Hour + 10*time.Minute, "in 2d 2h", "2d 2h ago"},
	}
	for _, tt := range tests {
		if got := ExpiresIn(now, now.Add(tt.d)); got != tt.expires {
			t.Errorf("ExpiresIn(%v) = %q, want %q", tt.d, got, tt.expires)
		}
		if got := Age(now, now.Add(-tt.d)); got != tt.since {
			t.Errorf("Age(%v) = %q, want %q", tt.d, got, tt.since)
		}
	}
}

func TestPrettyJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, ``},
		{`{"a":1,"b":[2]}`, "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}"},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := PrettyJSON([]byte(tt.in)); got != tt.want {
			t.Errorf("PrettyJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
