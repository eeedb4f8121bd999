package journeys

import "testing"

func TestTargetKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ORD-1004", "ord-1004"},
		{" ord-1004 ", "ord-1004"},
		{"ＯＲＤ-１００４", "ord-1004"}, // full-width letters and digits
		{"acct-77", "acct-77"},
	} {
		if got := targetKey(tt.in); got != tt.want {
			t.Errorf("targetKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestShortMaskToken: a redacted account shows no digits; the token's hex
// is not the account's last four.
func TestShortMaskToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"GB33BUKB20201555559182", "••9182"},
		{"[iban:d38bf348]", "••"},
		{"[iban:12345678]", "••"},
		// An agent that sends only the last four digits (the OpenAI
		// Agents SDK example does) showed approvers "to account ••".
		{"9182", "••9182"},
		{"918", "••"},
		{"91a2", "••"},
	}
	for _, tt := range tests {
		if got := shortMask(tt.in); got != tt.want {
			t.Errorf("shortMask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
