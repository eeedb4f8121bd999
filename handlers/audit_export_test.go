package handlers

import (
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
)

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
