package views

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/sessions"
)

func TestWhenAndAgo(t *testing.T) {
	now := time.Date(2026, 3, 9, 12, 5, 7, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name, got, want string
	}{
		{"When converts to UTC and names it", When(now.In(paris)), "2026-03-09 12:05:07 UTC"},
		{"When zero", When(time.Time{}), "—"},
		{"Day", Day(time.Date(2026, 3, 9, 23, 30, 0, 0, time.FixedZone("CEST", 2*3600))), "2026-03-09"},
		{"Day zero", Day(time.Time{}), ""},
		{"storedTime", When(storedTime("2026-03-09T12:05:07.123456789Z")), "2026-03-09 12:05:07 UTC"},
		{"storedTime not a time", When(storedTime("yesterday")), "—"},
		{"Ago seconds", Ago(now.Add(-20*time.Second), now), "just now"},
		{"Ago minutes", Ago(now.Add(-5*time.Minute), now), "5 min ago"},
		{"Ago hours", Ago(now.Add(-3*time.Hour), now), "3 h ago"},
		{"Ago days", Ago(now.Add(-72*time.Hour), now), "3 days ago"},
		{"Ago future", Ago(now.Add(23*time.Hour+30*time.Minute), now), "in 23 h"},
		{"Ago past a month", Ago(now.AddDate(0, -2, 0), now), ""},
		{"Ago zero", Ago(time.Time{}, now), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// anyTimeRE finds a date with a time of day in a page's text, whatever its
// format; oneTimeRE is the one format pages use.
var (
	anyTimeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?Z?(?: UTC)?`)
	oneTimeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$`)
)

// checkOneTimeFormat fails when a page shows a time in any format but
// "2026-03-09 12:05:07 UTC", names the zone in a heading instead of on the
// value, or shows a time without its machine value in <time datetime>.
func checkOneTimeFormat(t *testing.T, doc *goquery.Document) {
	t.Helper()
	doc.Find("details.raw").Remove() // the raw JSON is shown as it is, on demand
	text := strings.Join(strings.Fields(doc.Find("body").Text()), " ")
	found := anyTimeRE.FindAllString(text, -1)
	if len(found) == 0 {
		t.Fatal("the page shows no time at all")
	}
	for _, s := range found {
		if !oneTimeRE.MatchString(s) {
			t.Errorf("time %q is not in the one format (2026-03-09 12:05:07 UTC)", s)
		}
	}
	if strings.Contains(text, "(UTC)") {
		t.Error(`a heading says "(UTC)": the zone belongs on each value`)
	}
	times := doc.Find("time")
	if times.Length() < len(found) {
		t.Errorf("%d times shown, %d in <time datetime>", len(found), times.Length())
	}
	times.Each(func(_ int, s *goquery.Selection) {
		dt, _ := s.Attr("datetime")
		if _, err := time.Parse(time.RFC3339, dt); err != nil {
			t.Errorf("<time> %q has datetime %q, want RFC 3339", s.Text(), dt)
		}
	})
}

// The action page, with its trail of decisions and effects, shows every
// time one way, the zone on each value.
func TestActionPageShowsOneTimeFormat(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	decided, executed := now.Add(-time.Hour), now.Add(-50*time.Minute)
	v := ApprovalView{
		Action: approvals.Action{
			ID: "act_1", TenantID: "t1", Tool: "issue_refund", Summary: "Refund $24.00", Impact: risk.ImpactHigh,
			Status: approvals.StatusExecuted, ApprovalsRequired: 1, ApprovalsGiven: 1, CreatedAt: now.Add(-2 * time.Hour),
			ExpiresAt: now.Add(22 * time.Hour), DecidedAt: &decided, ExecutedAt: &executed,
			Receipt: []byte(`{"refund_id":"rf_1","created":"2026-03-01T11:10:00Z"}`),
		},
		Decisions:  []approvals.Decided{{PrincipalID: "p_bob", Decision: approvals.Approve, At: decided}},
		TenantSlug: "acme", Now: now, ToolSwitch: catalog.SwitchState{Enabled: true},
	}
	checkOneTimeFormat(t, renderAction(t, v))
}

// An audit event's details read like the rest of the page: a time in the
// one format, a status in words.
func TestAuditDetailText(t *testing.T) {
	for _, tt := range []struct {
		k    string
		v    any
		want string
	}{
		{"expires_at", "2026-03-09T12:05:07.5Z", "2026-03-09 12:05:07 UTC"},
		{"status", "awaiting_approval", "Awaiting approval"},
		{"from_status", "executed", "Executed"},
		{"reason", "INC-7", "INC-7"},
	} {
		if got := detailText(tt.k, tt.v); got != tt.want {
			t.Errorf("detailText(%q, %v) = %q, want %q", tt.k, tt.v, got, tt.want)
		}
	}
}

// Lists say how long ago a key was last used and a session last seen,
// next to the time itself.
func TestListsSayHowLongAgo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	used := now.Add(-5 * time.Minute)
	for name, c := range map[string]templ.Component{
		"keys": KeyList(Page{CSRF: "token"}, KeysView{Now: now, Total: 1, Rows: []KeyRow{{
			Key: keys.Key{ID: "key_1", Name: "agent", CreatedAt: now.Add(-72 * time.Hour), LastUsedAt: &used}, State: KeyActive}}}),
		"sessions": SessionList(Page{CSRF: "token"}, SessionsView{Now: now, Total: 1, Rows: []sessions.Row{{
			ID: "s1", Name: "Alice", CreatedAt: now.Add(-time.Hour), LastSeenAt: used}}}),
	} {
		var b bytes.Buffer
		if err := c.Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		if text := doc.Find("tbody").Text(); !strings.Contains(text, "2026-03-01 11:55:00 UTC") || !strings.Contains(text, "5 min ago") || strings.Contains(text, "UTC·") {
			t.Errorf("%s list row = %q, want the time and how long ago", name, strings.Join(strings.Fields(text), " "))
		}
	}
}
