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

func TestPromptTextReadsTheMessages(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[{"role":"user","content":"Where is [email:1a2b3c4d]'s order?"}]`, "user: Where is [email:1a2b3c4d]'s order?"},
		{`[{"role":"system","content":"Be brief."},{"role":"user","content":"Refund ORD-1005"}]`, "2 messages; last, user: Refund ORD-1005"},
		{`[{"role":"user","content":[{"type":"text","text":"Look"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"here"}]}]`, "user: Look here"},
		{`not json`, "not json"},
		{`[]`, "[]"},
	} {
		if got := promptText(c.in); got != c.want {
			t.Errorf("promptText(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}
