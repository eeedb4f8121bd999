package web

import (
	"regexp"
	"strings"
	"testing"
)

// Redaction tokens look like "[iban:d38bf348]": a kind, a colon, eight hex
// digits and a bracket. A page may show a token whole, never a piece of
// one: a summary that slices a possibly-redacted value (the last four
// characters of an account that was a token, "••348]") both misleads the
// reader and shows that the value was sliced.
var (
	// cutTokenHead is a token's opening whose hex stops short of eight
	// digits: "[iban:d38b…" or "[iban:d38 ".
	cutTokenHead = regexp.MustCompile(`\[[a-z0-9_]+:[0-9a-f]{0,7}(?:[^0-9a-f]|$)`)
	// cutTokenTail is a token's end shown as account digits: "••348]".
	cutTokenTail = regexp.MustCompile(`••[0-9a-f]{0,8}\]`)
)

// slicedToken returns the first piece of a redaction token in body, or "".
func slicedToken(body string) string {
	if m := cutTokenHead.FindString(body); m != "" {
		return m
	}
	return cutTokenTail.FindString(body)
}

// checkNoSlicedToken fails the test when an HTML page shows a piece of a
// redaction token. The harness calls it for every page a test fetches.
func checkNoSlicedToken(t testing.TB, method, url, contentType, body string) {
	t.Helper()
	if !strings.HasPrefix(contentType, "text/html") {
		return
	}
	if m := slicedToken(body); m != "" {
		i := strings.Index(body, m)
		lo, hi := max(0, i-80), min(len(body), i+len(m)+80)
		t.Errorf("%s %s shows a sliced redaction token %q: …%s…", method, url, m, body[lo:hi])
	}
}

func TestSlicedToken(t *testing.T) {
	tests := []struct{ body, want string }{
		{`Refund to account ••9182 issued`, ""},
		{`account [iban:d38bf348] on file`, ""},
		{`<code>[email:3f9a1c2b]</code>`, ""},
		{`Refund of $2,400.00 to account ••348] issued.`, "••348]"},
		{`to account [iban:d38b issued`, "[iban:d38b "},
		{`to account [iban:d38bf34]`, "[iban:d38bf34]"},
		{`shown [card_number:`, "[card_number:"},
	}
	for _, tt := range tests {
		if got := slicedToken(tt.body); got != tt.want {
			t.Errorf("slicedToken(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
