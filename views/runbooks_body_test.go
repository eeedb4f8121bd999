package views

import (
	"testing"

	"github.com/wardenhq/warden/runbooks"
)

// A runbook whose document starts with its title shows the title once:
// the page's heading already says it.
func TestRunbookBodyWithoutRepeatedTitle(t *testing.T) {
	tests := []struct{ title, html, want string }{
		{"Tool provider outage", "<h1>Tool provider outage</h1>\n<p>A tool's provider times out.</p>\n", "<p>A tool's provider times out.</p>\n"},
		{"Bad release: roll back", "<h1>Bad release: roll back</h1>\n<p>x</p>", "<p>x</p>"},
		{"PII & traces", "<h1>PII &amp; traces</h1><p>x</p>", "<p>x</p>"},
		{"Tool provider outage", "<h1>Something else</h1>\n<p>x</p>", "<h1>Something else</h1>\n<p>x</p>"},
		{"Tool provider outage", "<p>No heading.</p>", "<p>No heading.</p>"},
	}
	for _, tt := range tests {
		v := RunbookView{Runbook: runbooks.Runbook{Title: tt.title, HTML: tt.html}}
		if got := v.Body(); got != tt.want {
			t.Errorf("Body(%q, %q) = %q, want %q", tt.title, tt.html, got, tt.want)
		}
	}
}
