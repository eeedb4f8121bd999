package handlers

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/problem"
)

func TestAuditQuery(t *testing.T) {
	all := &identity.Principal{ID: "p-all", Roles: []string{"auditor"}, Tenants: []string{"*"}}
	acme := &identity.Principal{ID: "p-acme", Roles: []string{"auditor"}, Tenants: []string{"acme", "initech"}}
	none := &identity.Principal{ID: "p-none", Roles: []string{"auditor"}}
	since := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(2025, 6, 1, 9, 30, 0, 123000000, time.UTC)
	tests := []struct {
		name   string
		user   *identity.Principal
		query  string
		want   audit.Query
		status int // of the error; 0 for none
	}{
		{"no filters", all, "", audit.Query{}, 0},
		{"every filter", all, "tenant=globex&actor=p-1&verb=action.&subject_type=action&subject_id=a+1&since=2025-06-01&until=2025-06-01T09:30:00.123Z",
			audit.Query{Tenant: "globex", ActorID: "p-1", Verb: "action.", SubjectType: "action", SubjectID: "a 1", Since: since, Until: until}, 0},
		{"spaces trimmed, datetime-local", all, "tenant=+acme+&since=2025-06-01T00:00",
			audit.Query{Tenant: "acme", Since: since}, 0},
		{"an offset becomes UTC", all, "until=2025-06-01T11:30:00.123%2B02:00", audit.Query{Until: until}, 0},
		{"scoped: first tenant when none named", acme, "verb=auth.login", audit.Query{Tenant: "acme", Verb: "auth.login"}, 0},
		{"scoped: a tenant of theirs", acme, "tenant=initech", audit.Query{Tenant: "initech"}, 0},
		{"scoped: another tenant", acme, "tenant=globex", audit.Query{}, 403},
		{"no tenant at all", none, "", audit.Query{}, 403},
		{"bad since", all, "since=yesterday", audit.Query{}, 400},
		{"bad until", all, "until=2025-13-01", audit.Query{}, 400},
		{"control character", all, "actor=a%0Ab", audit.Query{}, 400},
		{"overlong", all, "subject_id=" + strings.Repeat("x", audit.MaxFieldBytes+1), audit.Query{}, 400},
	}
	for _, tt := range tests {
		c := echo.New().NewContext(httptest.NewRequest("GET", "/audit/export.csv?"+tt.query, nil), httptest.NewRecorder())
		got, err := auditQuery(c, tt.user)
		var p *problem.Error
		switch {
		case tt.status != 0 && (!errors.As(err, &p) || p.Status() != tt.status):
			t.Errorf("%s: auditQuery(%q) error = %v, want status %d", tt.name, tt.query, err, tt.status)
		case tt.status == 0 && err != nil:
			t.Errorf("%s: auditQuery(%q) error = %v", tt.name, tt.query, err)
		case tt.status == 0 && !queryEqual(got, tt.want):
			t.Errorf("%s: auditQuery(%q) = %+v, want %+v", tt.name, tt.query, got, tt.want)
		}
	}
}

func queryEqual(a, b audit.Query) bool {
	return a.Tenant == b.Tenant && a.ActorID == b.ActorID && a.Verb == b.Verb && a.SubjectType == b.SubjectType &&
		a.SubjectID == b.SubjectID && a.Since.Equal(b.Since) && a.Until.Equal(b.Until)
}

// TestExportLinksPinTheRange: the page's links carry until, the earlier of
// the filter's and the rendering time, and read back as the same query.
func TestExportLinksPinTheRange(t *testing.T) {
	rendered := time.Date(2025, 6, 2, 8, 0, 0, 987654321, time.UTC)
	user := &identity.Principal{Tenants: []string{"*"}}
	tests := []struct {
		name      string
		q         audit.Query
		wantUntil time.Time
	}{
		{"no end", audit.Query{Tenant: "acme", Verb: "action.", SubjectID: "a&b=c"}, rendered},
		{"an end in the future", audit.Query{Until: rendered.Add(time.Hour)}, rendered},
		{"an end in the past", audit.Query{ActorID: "p 1", Since: rendered.Add(-48 * time.Hour), Until: rendered.Add(-time.Hour)}, rendered.Add(-time.Hour)},
	}
	for _, tt := range tests {
		links := exportLinks(tt.q, rendered)
		want := tt.q
		want.Until = tt.wantUntil
		for path, link := range map[string]string{
			"/audit/export.jsonl": links.JSONL, "/audit/export.jsonl.manifest.json": links.JSONLManifest,
			"/audit/export.csv": links.CSV, "/audit/export.csv.manifest.json": links.CSVManifest,
		} {
			u, err := url.Parse(link)
			if err != nil || u.Path != path {
				t.Errorf("%s: link %q, want path %s", tt.name, link, path)
				continue
			}
			c := echo.New().NewContext(httptest.NewRequest("GET", link, nil), httptest.NewRecorder())
			got, err := auditQuery(c, user)
			if err != nil || !queryEqual(got, want) {
				t.Errorf("%s: %s reads back as %+v, %v; want %+v", tt.name, link, got, err, want)
			}
		}
	}
}
