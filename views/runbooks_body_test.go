package views

import (
	"testing"

	"github.com/wardenhq/warden/runbooks"
)

// A runbook or a skill whose document starts with its title shows the
// title once: the page's heading already says it.
func TestRunbookBodyWithoutRepeatedTitle(t *testing.T) {
	tests := []struct{ title, html, want string }{
		{"Tool provider outage", "<h2>Tool provider outage</h2>\n<p>A tool's provider times out.</p>\n", "<p>A tool's provider times out.</p>\n"},
		{"Bad release: roll back", "<h2>Bad release: roll back</h2>\n<p>x</p>", "<p>x</p>"},
		{"PII & traces", "<h2>PII &amp; traces</h2><p>x</p>", "<p>x</p>"},
		{"Tool provider outage", "<h2>Something else</h2>\n<p>x</p>", "<h2>Something else</h2>\n<p>x</p>"},
		{"Tool provider outage", "<p>No heading.</p>", "<p>No heading.</p>"},
	}
	for _, tt := range tests {
		if got := (SkillView{Skill: SkillRow{Name: tt.title}, HTML: tt.html}).Body(); got != tt.want {
			t.Errorf("SkillView.Body(%q, %q) = %q, want %q", tt.title, tt.html, got, tt.want)
		}
		v := RunbookView{Runbook: runbooks.Runbook{Title: tt.title, HTML: tt.html}}
		if got := v.Body(); got != tt.want {
			t.Errorf("Body(%q, %q) = %q, want %q", tt.title, tt.html, got, tt.want)
		}
	}
}
