package sign

import (
	"testing"
	"time"
)

// TestWorkedExample checks the example docs/api.md gives receivers.
func TestWorkedExample(t *testing.T) {
	body := []byte(`{"id":"act_01JEXAMPLE","status":"approved","summary":"Refund $45.50 for ORD-1005","timestamp":"2025-11-30T00:00:00Z"}`)
	at := time.Unix(1764460800, 0)
	newSecret, oldSecret := "whsec_563rf68d2d7qb966u7tbmgi5wckhnqqg4cai9t9h", "whsec_3r4zfbnwjwyc7npwyuyk3germk29f74qn6v65t4r"
	one := "t=1764460800,v1=59212d63c0ba1d7589edd5064fb5b456a214d93f7cd417c0f0783e556266f75d"
	if got := Sign([]string{newSecret}, at, body); got != one {
		t.Errorf("Sign = %s, want %s", got, one)
	}
	two := one + ",v1=e65f9ae774021aa47c31123f595130c2aaae052a2bc6af5e842c88da3ad81e3e"
	if got := Sign([]string{newSecret, oldSecret}, at, body); got != two {
		t.Errorf("Sign (rotation) = %s, want %s", got, two)
	}
	for _, c := range []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		want   bool
	}{
		{"good", newSecret, one, body, at.Add(time.Minute), true},
		{"either secret after rotation", oldSecret, two, body, at, true},
		{"old secret, one signature", oldSecret, one, body, at, false},
		{"stale", newSecret, one, body, at.Add(6 * time.Minute), false},
		{"from the future", newSecret, one, body, at.Add(-6 * time.Minute), false},
		{"body changed", newSecret, one, append([]byte(nil), append(body, ' ')...), at, false},
		{"no t", newSecret, "v1=59212d63", body, at, false},
	} {
		if got := Verify(c.secret, c.header, c.body, c.now); got != c.want {
			t.Errorf("%s: Verify = %v, want %v", c.name, got, c.want)
		}
	}
}
