package web

import "testing"

func TestSafeNext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/approvals?sort=age", "/approvals?sort=age"},
		{"/", "/"},
		{"", ""},
		{"https://evil.example", ""},
		{"//evil.example", ""},
		{"/\\evil.example", ""},
		{"/\t/evil.example", ""},
		{"/%09/evil.example", "/%09/evil.example"}, // stays a path on this host once decoded by the router
		{"/\r\nSet-Cookie: x", ""},
		{"/auth/callback?code=x", ""},
		{"javascript:alert(1)", ""},
	}
	for _, tt := range tests {
		if got := safeNext(tt.in); got != tt.want {
			t.Errorf("safeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
