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

// Journal steps' statuses and kinds read as words, never snake_case.
func TestStepWords(t *testing.T) {
	for status, want := range map[string]string{
		"ok": "OK", "failed": "Failed", "refused": "Refused", "awaiting_approval": "Awaiting approval",
		"rejected": "Rejected", "expired": "Expired", "cancelled": "Cancelled",
	} {
		if got := stepWord(status); got != want {
			t.Errorf("stepWord(%q) = %q, want %q", status, got, want)
		}
	}
	for kind, want := range map[string]string{"route": "Route", "tool": "Tool call", "approval": "Approval"} {
		if got := stepKindWord(kind); got != want {
			t.Errorf("stepKindWord(%q) = %q, want %q", kind, got, want)
		}
	}
}

// A failed journey says why in words; every code the runtime ends a
// journey with reads as a sentence, not snake_case.
func TestJourneyErrorWords(t *testing.T) {
	for _, code := range []string{"max_steps_exceeded", "model_unavailable", "no_route", "skill_disabled", "skill_not_in_scope",
		"tool_disabled", "tool_refused", "tool_unavailable", "budget_exhausted", "tenant_frozen", "journey_timeout", "interrupted", "some_new_code"} {
		got := journeyErrorWords(code)
		if got == "" || strings.Contains(strings.ReplaceAll(got, "max_steps", ""), "_") || got == code {
			t.Errorf("journeyErrorWords(%q) = %q, want a sentence", code, got)
		}
	}
	if got := journeyErrorWords("max_steps_exceeded"); !strings.Contains(got, "more tool calls than") {
		t.Errorf("max_steps_exceeded reads %q", got)
	}
}
