package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Traces and audit rows link to what they name: a journey to its action,
// an audit event to its action, key or tenant, when the viewer may open
// that page.
func TestTracesAndAuditLinkTheirSubjects(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	refund := pendingAction(t, in, "$2,400")

	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	traces := dave.get("/traces")
	row := traces.Doc.Find(`[data-testid="trace-` + refund.JourneyID + `"]`)
	if href, _ := row.Find(`[data-testid="trace-action-link"]`).Attr("href"); href != "/approvals/"+refund.ID {
		t.Errorf("trace row of the $2,400 refund links to action %q, want /approvals/%s", href, refund.ID)
	}
	if sum := strings.TrimSpace(row.Find(`[data-testid="trace-input-summary"]`).Text()); sum == "" {
		t.Error("the trace row shows no summary of its input")
	}
	detail := dave.get("/traces/" + refund.JourneyID)
	if href, _ := detail.Doc.Find(`[data-testid="trace-action-link"]`).Attr("href"); href != "/approvals/"+refund.ID {
		t.Errorf("trace page links to %q, want the action", href)
	}

	audit := dave.get("/audit?subject_type=action&subject_id=" + url.QueryEscape(refund.ID))
	ev := audit.Doc.Find(`[data-testid="audit-table"] tbody tr`).First()
	if href, _ := ev.Find(`[data-testid="subject-link"]`).Attr("href"); href != "/approvals/"+refund.ID {
		t.Errorf("audit row of the refund links to %q, want its action", href)
	}
	if ev.Find(`details [data-testid="event-fields"] dt`).Length() < 2 {
		t.Error("audit row has no key/value list of its details")
	}
	if ev.Find(`details details [data-testid="event-details"]`).Length() != 1 {
		t.Error("the raw JSON of an audit row is not behind its own disclosure")
	}
	// dave may not open keys: an event about a key offers no link to it.
	keyEvents := dave.get("/audit?subject_type=key")
	keyEvents.Doc.Find(`[data-testid="subject-link"]`).Each(func(_ int, s *goquery.Selection) {
		if href, _ := s.Attr("href"); strings.HasPrefix(href, "/keys/") {
			t.Errorf("dave, an auditor, is offered a key's page %s", href)
		}
	})

	// erin, an admin, goes from a key event to the key and from a tenant
	// event to the tenant.
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	for _, c := range []struct{ subject, prefix string }{{"key", "/keys/"}, {"tenant", "/tenants/acme"}} {
		p := erin.get("/audit?subject_type=" + c.subject)
		href, ok := p.Doc.Find(`[data-testid="subject-link"]`).First().Attr("href")
		if !ok || !strings.HasPrefix(href, c.prefix) {
			t.Errorf("erin's %s event links to %q, want %s…", c.subject, href, c.prefix)
			continue
		}
		if got := erin.get(href); got.Status != 200 {
			t.Errorf("GET %s = %d", href, got.Status)
		}
	}
}
