package views

import (
	"regexp"
	"strings"
	"testing"
)

func TestInputSummary(t *testing.T) {
	long := strings.Repeat("word ", 20)
	token := strings.Repeat("x", 60) + " refund to [iban:d38bf348] please"
	tests := []struct {
		name, in, want string
	}{
		{"short kept", "refund order 42", "refund order 42"},
		{"spaces folded", "refund\n\norder   42", "refund order 42"},
		{"cut at a word", long, strings.TrimSpace(strings.Repeat("word ", 16)) + "…"},
		{"never inside a token", token, strings.Repeat("x", 60) + " refund to…"},
	}
	for _, tt := range tests {
		if got := InputSummary(tt.in); got != tt.want {
			t.Errorf("%s: InputSummary(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	sliced := regexp.MustCompile(`\[[a-z_]+:[^\]\s]*(…|$)`)
	for n := 60; n < 120; n++ {
		in := strings.Repeat("a", n) + " [card:0a1b2c3d] [email:ffee0011] end"
		if got := InputSummary(in); sliced.MatchString(got) {
			t.Errorf("InputSummary(%q) = %q: a token is cut", in, got)
		}
	}
}
