package runtime

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
