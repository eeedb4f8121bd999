package views

import (
	"strings"
	"testing"
)

// The Model calls table clips a prompt without ever cutting a redaction
// token in half (half a token reads as data).
func TestClipNeverCutsAToken(t *testing.T) {
	prompt := strings.Repeat("a", 150) + " [name:3f9a1c2b] " + strings.Repeat("b", 40)
	got := clip(prompt, 160) // 160 falls inside the token
	if strings.Contains(got, "[name:") && !strings.Contains(got, "[name:3f9a1c2b]") {
		t.Fatalf("clip cut a token: %q", got)
	}
	if !strings.HasSuffix(got, "…") || len([]rune(got)) > 161 {
		t.Fatalf("clip = %q, want at most 160 characters and an ellipsis", got)
	}
	if short := "[email:1a2b3c4d] hi"; clip(short, 160) != short {
		t.Fatalf("a short prompt changed: %q", clip(short, 160))
	}
}
