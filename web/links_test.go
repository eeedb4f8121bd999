package web

import (
	"net/url"
	"strconv"
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

// followLinks opens every console link on p as b's user and reports each
// that answers 403 (or any error status): a page offers only links that
// open for the person who sees it.
func followLinks(t *testing.T, b *browser, who string, p page) {
	t.Helper()
	seen := map[string]bool{}
	p.Doc.Find(`a[href]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		if !strings.HasPrefix(href, "/") || strings.HasPrefix(href, "//") || strings.HasPrefix(href, "/static/") || seen[href] {
			return
		}
		seen[href] = true
		if got := b.get(href); got.Status >= 400 {
			t.Errorf("%s: the link %q (%s) on %s answers %d", who, strings.TrimSpace(s.Text()), href, p.URL.Path, got.Status)
		}
	})
	if len(seen) == 0 {
		t.Errorf("%s: no links found on %s", who, p.URL.Path)
	}
}

// On-call presses runbook buttons but may not open the audit trail: the
// result page shows the run's audit event itself, and every link on it
// and on the action page a button created opens for carol. Approvers and
// auditors follow every link of an action page too, and the breadcrumb
// leads each to a page of their own.
func TestLinksOpenForOncallAfterARunbook(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")

	path := "/runbooks/pii-in-traces/actions/switch-off-refunds"
	tok := confirmToken(t, carol, path)
	res := carol.post(path, carol.withCSRF(url.Values{"reason": {"provider is down"}, "token": {tok}}), nil)
	if res.Status != 200 || statusOf(res, "run-status") != "done" {
		t.Fatalf("press = %d, status %q", res.Status, statusOf(res, "run-status"))
	}
	ev := lastAudit(t, in.DB)
	if got := text(res, "run-event-seq"); got != strconv.FormatInt(ev.Seq, 10) || ev.Verb != "runbook.action" {
		t.Errorf("the result shows event %q, want %d (%s)", got, ev.Seq, ev.Verb)
	}
	if s := text(res, "run-event-sentence"); !strings.Contains(s, "Carol On-call pressed") || !strings.Contains(s, "provider is down") {
		t.Errorf("the event reads %q, want Carol's press with its reason", s)
	}
	if text(res, "run-event-actor") != "Carol On-call" {
		t.Errorf("the event's actor = %q", text(res, "run-event-actor"))
	}
	if res.Doc.Find(`[data-testid="run-audit"]`).Length() != 0 {
		t.Error("carol, on-call, is offered the audit trail, which she may not open")
	}
	followLinks(t, carol, "carol", res)

	// erin, an admin, may open the audit trail: the link is there and
	// finds the run's event.
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	href, _ := erin.get(res.URL.Path).Doc.Find(`[data-testid="run-audit"]`).Attr("href")
	if href == "" {
		t.Fatal("erin is not offered the run in the audit trail")
	}
	if trail := erin.get(href); trail.Status != 200 || trail.Doc.Find(`[data-testid="audit-event-`+strconv.FormatInt(ev.Seq, 10)+`"]`).Length() != 1 {
		t.Errorf("GET %s = %d without event %d", href, trail.Status, ev.Seq)
	}

	// A button that needs an approver: its result links to the action.
	path = "/runbooks/pii-in-traces/actions/purge-acme-last-week"
	tok = confirmToken(t, carol, path)
	res = carol.post(path, carol.withCSRF(url.Values{"reason": {"card numbers in refund traces"}, "token": {tok}}), nil)
	actionURL, _ := res.Doc.Find(`[data-testid="run-approval"]`).Attr("href")
	if res.Status != 200 || !strings.HasPrefix(actionURL, "/approvals/act_") {
		t.Fatalf("purge press = %d, approval link %q", res.Status, actionURL)
	}
	followLinks(t, carol, "carol", res)

	refund := pendingAction(t, in, "$2,400")
	for _, c := range []struct {
		who, crumb, crumbURL string
		b                    *browser
	}{
		{"carol", "Traces", "/traces", carol},
		{"alice", "Approvals", "/approvals", nil},
		{"dave", "Traces", "/traces", nil},
	} {
		b := c.b
		if b == nil {
			b = newBrowser(t, in.URL)
			b.loginDev(c.who)
		}
		for _, a := range []string{actionURL, "/approvals/" + refund.ID} {
			p := b.get(a)
			if p.Status != 200 {
				t.Errorf("%s: GET %s = %d", c.who, a, p.Status)
				continue
			}
			crumb := p.Doc.Find(`[data-testid="action-crumb"]`)
			if href, _ := crumb.Attr("href"); href != c.crumbURL || strings.TrimSpace(crumb.Text()) != c.crumb {
				t.Errorf("%s: the breadcrumb of %s is %q → %q, want %s → %s", c.who, a, crumb.Text(), href, c.crumb, c.crumbURL)
			}
			followLinks(t, b, c.who, p)
		}
	}
}
