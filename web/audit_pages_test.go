package web

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// auditSeqs lists the seqs the audit page shows, in order.
func auditSeqs(t *testing.T, doc *goquery.Document) []int64 {
	t.Helper()
	var out []int64
	doc.Find(`[data-testid="audit-table"] tbody tr [data-testid="event-seq"]`).Each(func(_ int, s *goquery.Selection) {
		n, err := strconv.ParseInt(strings.TrimSpace(s.Text()), 10, 64)
		if err != nil {
			t.Fatalf("seq cell %q: %v", s.Text(), err)
		}
		out = append(out, n)
	})
	return out
}

// everyEvent is the whole chain, newest first.
func everyEvent(t *testing.T, db *store.DB) []audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// wantSeqs is the first page (newest first) of the events keep selects:
// the oracle the page is compared with, written without audit.Query.
func wantSeqs(evs []audit.Event, keep func(audit.Event) bool) []int64 {
	var out []int64
	for _, e := range evs {
		if keep(e) && len(out) < 50 {
			out = append(out, e.Seq)
		}
	}
	return out
}

// appendAt appends events as they would have been recorded at the given
// times.
func appendAt(t *testing.T, db *store.DB, evs ...audit.Event) {
	t.Helper()
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		for _, e := range evs {
			if _, err := audit.Append(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func principalID(t *testing.T, db *store.DB, subject string) string {
	t.Helper()
	var id string
	if err := db.Read().QueryRow(`SELECT id FROM principals WHERE subject = ?`, subject).Scan(&id); err != nil {
		t.Fatalf("principal %s: %v", subject, err)
	}
	return id
}

func TestAuditFiltersNarrowTheList(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	refund := pendingAction(t, in, "ORD-1005")
	if p := alice.post("/approvals/"+refund.ID+"/decide", alice.withCSRF(decideForm(approvals.Reject, "charged once only", refund.PayloadDigest)), nil); p.Status != http.StatusOK {
		t.Fatalf("reject = %d", p.Status)
	}
	globex, err := tenants.Create(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "cli"}, "globex", "Globex")
	if err != nil {
		t.Fatal(err)
	}
	createActions(t, in, globex, 2, 1000)
	day := func(d, h int) time.Time { return time.Date(2027, 1, d, h, 0, 0, 0, time.UTC) }
	retention := audit.Actor{Type: audit.ActorSystem, ID: "retention"}
	appendAt(t, in.DB,
		audit.Event{Time: day(10, 12), Actor: retention, Tenant: "acme", Verb: "traces.purged", Subject: audit.Subject{Type: "tenant", ID: "t"}},
		audit.Event{Time: day(15, 23), Actor: retention, Tenant: "acme", Verb: "traces.purged", Subject: audit.Subject{Type: "tenant", ID: "t"}},
		audit.Event{Time: day(20, 0), Actor: retention, Tenant: "acme", Verb: "traces.purged", Subject: audit.Subject{Type: "tenant", ID: "t"}},
	)
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	aliceID := principalID(t, in.DB, "dev-alice")
	evs := everyEvent(t, in.DB)
	before := func(d int) time.Time { return time.Date(2027, 1, d, 0, 0, 0, 0, time.UTC) }

	tests := []struct {
		name  string
		query url.Values
		keep  func(audit.Event) bool
	}{
		{"tenant", url.Values{"tenant": {"globex"}}, func(e audit.Event) bool { return e.Tenant == "globex" }},
		{"actor", url.Values{"actor": {aliceID}}, func(e audit.Event) bool { return e.Actor.ID == aliceID }},
		{"verb prefix", url.Values{"verb": {"action."}}, func(e audit.Event) bool { return strings.HasPrefix(e.Verb, "action.") }},
		{"exact verb", url.Values{"verb": {"action.rejected"}}, func(e audit.Event) bool { return e.Verb == "action.rejected" }},
		{"subject", url.Values{"subject_type": {"action"}, "subject_id": {refund.ID}}, func(e audit.Event) bool {
			return e.Subject.Type == "action" && e.Subject.ID == refund.ID
		}},
		{"one day, to inclusive", url.Values{"from": {"2027-01-12"}, "to": {"2027-01-15"}}, func(e audit.Event) bool {
			return !e.Time.Before(before(12)) && e.Time.Before(before(16))
		}},
		{"to alone", url.Values{"to": {"2027-01-14"}}, func(e audit.Event) bool { return e.Time.Before(before(15)) }},
		{"tenant and verb prefix", url.Values{"tenant": {"acme"}, "verb": {"action."}}, func(e audit.Event) bool {
			return e.Tenant == "acme" && strings.HasPrefix(e.Verb, "action.")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := dave.get("/audit?" + tt.query.Encode())
			if p.Status != http.StatusOK {
				t.Fatalf("GET /audit?%s = %d", tt.query.Encode(), p.Status)
			}
			got, want := auditSeqs(t, p.Doc), wantSeqs(evs, tt.keep)
			if len(want) == 0 || len(want) >= len(evs) {
				t.Fatalf("the oracle selects %d of %d events: the filter narrows nothing here", len(want), len(evs))
			}
			if !slices.Equal(got, want) {
				t.Errorf("GET /audit?%s lists seqs %v, want %v", tt.query.Encode(), got, want)
			}
			for name, v := range tt.query {
				if sel := p.Doc.Find(`form[data-testid="audit-filters"] [name="` + name + `"]`); sel.Is("input") {
					if val, _ := sel.Attr("value"); val != v[0] {
						t.Errorf("filter %s shows %q, want the typed %q", name, val, v[0])
					}
				}
			}
			// The export links carry the same filters (dates as instants) and
			// pin the end of the range, so a file and its manifest agree.
			for _, id := range []string{"export-jsonl", "export-csv"} {
				href, _ := p.Doc.Find(`[data-testid="` + id + `"]`).Attr("href")
				u, err := url.Parse(href)
				if err != nil || u.Query().Get("until") == "" {
					t.Errorf("%s links to %q, want until pinned", id, href)
					continue
				}
				for name, v := range tt.query {
					switch name {
					case "from":
						if !strings.HasPrefix(u.Query().Get("since"), v[0]) {
							t.Errorf("%s links to %q, want since %s", id, href, v[0])
						}
					case "to":
					default:
						if u.Query().Get(name) != v[0] {
							t.Errorf("%s links to %q, want %s=%s", id, href, name, v[0])
						}
					}
				}
			}
		})
	}

	// Each event reads as a sentence; an action's links to its trail.
	p := dave.get("/audit?subject_type=action&subject_id=" + refund.ID)
	row := p.Doc.Find(`[data-testid="audit-table"] tbody tr`).First()
	if s := strings.TrimSpace(row.Find(`[data-testid="event-sentence"]`).Text()); !strings.HasPrefix(s, "Alice Approver rejected action "+refund.ID+" — Refund $45.50") ||
		!strings.HasSuffix(s, "reason: charged once only") {
		t.Errorf("rejection reads %q", s)
	}
	if href, _ := row.Find(`[data-testid="trail-link"]`).Attr("href"); href != "/audit/actions/"+refund.ID {
		t.Errorf("trail link = %q", href)
	}
	if h := strings.TrimSpace(row.Find(`details [data-testid="event-hash"]`).Text()); len(h) != 64 {
		t.Errorf("hash on demand = %q", h)
	}
	if got := text(p, "chain-head-seq"); got != strconv.FormatInt(evs[0].Seq, 10) {
		t.Errorf("chain head seq = %q, want %d", got, evs[0].Seq)
	}
	if got := text(p, "chain-head-hash"); got != evs[0].Hash {
		t.Errorf("chain head hash = %q, want %s", got, evs[0].Hash)
	}
}

func TestAuditPagingKeepsFilters(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	var evs []audit.Event
	for i := range 90 {
		e := audit.Event{Actor: audit.Actor{Type: audit.ActorSystem, ID: "retention"}, Tenant: "acme", Verb: "tenant.retention",
			Subject: audit.Subject{Type: "tenant", ID: "t"}}
		if i%3 == 2 { // noise between the matching events
			e.Verb, e.Tenant = "auth.logout", ""
		}
		evs = append(evs, e)
	}
	appendAt(t, in.DB, evs...)
	b := newBrowser(t, in.URL)
	b.loginDev("dave")
	want := wantSeqs(everyEvent(t, in.DB), func(e audit.Event) bool { return e.Tenant == "acme" && strings.HasPrefix(e.Verb, "tenant.") })
	all := []int64{}
	for _, e := range everyEvent(t, in.DB) {
		if e.Tenant == "acme" && strings.HasPrefix(e.Verb, "tenant.") {
			all = append(all, e.Seq)
		}
	}
	if len(all) != 60 {
		t.Fatalf("%d matching events, want 60", len(all))
	}

	first := b.get("/audit?tenant=acme&verb=tenant.")
	if got := auditSeqs(t, first.Doc); !slices.Equal(got, want) {
		t.Fatalf("first page = %v, want %v", got, want)
	}
	older, ok := first.Doc.Find(`[data-testid="audit-older"]`).Attr("href")
	u, _ := url.Parse(older)
	if !ok || u.Query().Get("tenant") != "acme" || u.Query().Get("verb") != "tenant." || u.Query().Get("after") == "" {
		t.Fatalf("older link = %q, want the filters and a cursor", older)
	}
	second := b.get(older)
	if got := auditSeqs(t, second.Doc); !slices.Equal(got, all[50:]) {
		t.Errorf("second page = %v, want %v", got, all[50:])
	}
	if second.Doc.Find(`[data-testid="audit-older"]`).Length() != 0 {
		t.Error("the last page offers older events")
	}
	newer, _ := second.Doc.Find(`[data-testid="audit-newer"]`).Attr("href")
	if back := b.get(newer); !slices.Equal(auditSeqs(t, back.Doc), want) {
		t.Errorf("back to the newer page (%s) = %v, want %v", newer, auditSeqs(t, back.Doc), want)
	}
	if v, _ := second.Doc.Find(`#verb`).Attr("value"); v != "tenant." {
		t.Errorf("the second page's verb filter shows %q", v)
	}
}

func TestAuditMalformedFilterIsRefused(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("dave")
	tests := []struct {
		query, field, message string
	}{
		{"from=2025-13-45&verb=action.", "from", "must look like 2026-01-31"},
		{"to=yesterday", "to", "must look like 2026-01-31"},
		{"from=2025-02-01&to=2025-01-31", "to", "before the start date"},
		{"verb=Action%21", "verb", "such as action.approved"},
		{"subject_type=Action+Item", "subject_type", "lower-case letters"},
	}
	for _, tt := range tests {
		p := b.get("/audit?" + tt.query)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("GET /audit?%s = %d, want 422", tt.query, p.Status)
		}
		if msg := text(p, "error-"+tt.field); !strings.Contains(msg, tt.message) {
			t.Errorf("GET /audit?%s: %s error %q, want %q", tt.query, tt.field, msg, tt.message)
		}
		if p.Doc.Find(`[data-testid="audit-table"]`).Length() != 0 || p.Doc.Find(`[data-testid="audit-empty"]`).Length() != 1 {
			t.Errorf("GET /audit?%s lists events", tt.query)
		}
		if p.Doc.Find(`[data-testid="export-jsonl"]`).Length() != 0 {
			t.Errorf("GET /audit?%s offers an export of a refused filter", tt.query)
		}
		q, _ := url.ParseQuery(tt.query)
		for name, v := range q {
			if got, _ := p.Doc.Find("#" + name).Attr("value"); got != v[0] {
				t.Errorf("GET /audit?%s: %s shows %q, want the typed %q", tt.query, name, got, v[0])
			}
		}
	}
	if p := b.get("/audit?after=not-a-cursor&tenant=acme"); p.Status != http.StatusBadRequest {
		t.Errorf("a cursor Warden did not write = %d, want 400", p.Status)
	}
}

func TestAuditPagesRefuseApproversAndOtherTenants(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	acmeAction := pendingAction(t, in, "ORD-1005")
	globex, err := tenants.Create(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "cli"}, "globex", "Globex")
	if err != nil {
		t.Fatal(err)
	}
	globexAction := createActions(t, in, globex, 1, 1000)[0]

	for _, path := range []string{"/audit", "/audit?tenant=acme", "/audit/actions/" + acmeAction.ID} {
		if p := alice.get(path); p.Status != http.StatusForbidden {
			t.Errorf("approver GET %s = %d, want 403", path, p.Status)
		}
	}
	if p := alice.get("/approvals/" + acmeAction.ID); p.Doc.Find(`[data-testid="audit-trail-link"]`).Length() != 0 {
		t.Error("the action page offers an approver the audit trail")
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if p := carol.get("/audit/actions/" + acmeAction.ID); p.Status != http.StatusOK || p.Doc.Find(`a[href^="/audit?"], a[href="/audit"]`).Length() != 0 {
		t.Errorf("on-call GET the trail = %d with %d links to the audit log she may not open; want 200 and none",
			p.Status, p.Doc.Find(`a[href^="/audit?"], a[href="/audit"]`).Length())
	}
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	if href, _ := dave.get("/audit/actions/" + acmeAction.ID).Doc.Find(`[data-testid="trail-events-link"]`).Attr("href"); href != "/audit?subject_type=action&subject_id="+acmeAction.ID {
		t.Errorf("the auditor's trail links its events at %q", href)
	}
	if p := dave.get("/audit/actions/act_unknown"); p.Status != http.StatusNotFound {
		t.Errorf("trail of an unknown action = %d, want 404", p.Status)
	}

	scoped := &identity.Principal{ID: "p-acme-auditor", Name: "Scoped Auditor", Roles: []string{"auditor"}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB, Runtime: in.Agent.Journeys, Sealer: in.Agent.Journeys.Sealer()}
	rec, err := callAs(t, h.AuditList, scoped, http.MethodGet, "/audit", nil)
	if err != nil {
		t.Fatalf("scoped auditor GET /audit: %v", err)
	}
	doc, _ := goquery.NewDocumentFromReader(rec.Body)
	want := wantSeqs(everyEvent(t, in.DB), func(e audit.Event) bool { return e.Tenant == "acme" })
	if got := auditSeqs(t, doc); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("scoped auditor sees seqs %v, want acme's %v", got, want)
	}
	if strings.Contains(doc.Find(`[data-testid="audit-table"]`).Text(), "globex") {
		t.Error("scoped auditor's page mentions globex")
	}
	// A filter naming another tenant is 403; another tenant's action by id
	// is 404, as an unknown id is, so its existence is not told.
	refused := []struct {
		name   string
		h      func() error
		status int
	}{
		{"list globex events", func() error {
			_, err := callAs(t, h.AuditList, scoped, http.MethodGet, "/audit?tenant=globex", nil)
			return err
		}, http.StatusForbidden},
		{"globex trail", func() error {
			_, err := callAs(t, h.AuditTrail, scoped, http.MethodGet, "/", nil, "id", globexAction.ID)
			return err
		}, http.StatusNotFound},
	}
	for _, r := range refused {
		if got := httpStatus(r.h()); got != r.status {
			t.Errorf("%s = %d, want %d", r.name, got, r.status)
		}
	}
	rec, err = callAs(t, h.AuditTrail, scoped, http.MethodGet, "/", nil, "id", acmeAction.ID)
	if err != nil || rec.Code != http.StatusOK {
		t.Errorf("scoped auditor's own tenant's trail = %d, %v", rec.Code, err)
	}
}

// trailSteps lists a trail page's steps as "kind seq".
func trailSteps(p page) []string {
	var out []string
	p.Doc.Find(`[data-testid="trail-steps"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		kind, _ := s.Attr("data-kind")
		out = append(out, kind+" "+strings.TrimSpace(s.Find(`[data-testid="trail-seq"]`).Text()))
	})
	return out
}

// eventSeqs are the seqs of the events about an action, as "verb seq",
// oldest first.
func eventSeqs(t *testing.T, db *store.DB, actionID string) []string {
	t.Helper()
	evs, err := audit.Trail(context.Background(), db.Read(), "action", actionID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, strings.TrimPrefix(e.Verb, "action.")+" "+strconv.FormatInt(e.Seq, 10))
	}
	return out
}

func TestAuditTrailOfExecutedRefundAndItsReversal(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	orig := pendingAction(t, in, "ORD-1005")
	if p := alice.post("/approvals/"+orig.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "double charge confirmed", orig.PayloadDigest)), nil); p.Status != http.StatusOK {
		t.Fatalf("approve = %d", p.Status)
	}
	waitStatus(t, alice, orig.ID, approvals.StatusExecuted)
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")

	p := dave.get("/audit/actions/" + orig.ID)
	if p.Status != http.StatusOK {
		t.Fatalf("GET the trail = %d", p.Status)
	}
	want := eventSeqs(t, in.DB, orig.ID)
	if got := trailSteps(p); !slices.Equal(got, want) || len(got) != 3 ||
		!strings.HasPrefix(got[0], "requested ") || !strings.HasPrefix(got[1], "approved ") || !strings.HasPrefix(got[2], "executed ") {
		t.Fatalf("trail steps = %v, want requested → approved → executed with their seqs %v", got, want)
	}
	approved := p.Doc.Find(`[data-testid="trail-step-2"] [data-testid="trail-sentence"]`).Text()
	if !strings.HasPrefix(approved, "Alice Approver approved action "+orig.ID) || !strings.Contains(approved, "comment: double charge confirmed") {
		t.Errorf("approval reads %q", approved)
	}
	if r := p.Doc.Find(`[data-testid="trail-step-3"] [data-testid="trail-receipt"]`).Text(); !strings.Contains(r, "refund_id") {
		t.Errorf("executed step's receipt = %q, want the provider's refund id", r)
	}
	if note := p.Doc.Find(`[data-testid="trail-step-3"] [data-testid="trail-note"]`).Text(); !strings.Contains(note, "after the final approval") || !strings.Contains(note, "1 provider call") {
		t.Errorf("executed step's timing = %q", note)
	}
	if r := text(p, "trail-reconciliation"); !strings.HasPrefix(r, "reconciled") || !strings.Contains(r, "recorded the effect once") {
		t.Errorf("reconciliation = %q", r)
	}
	if got := text(p, "trail-ledger-state"); got != "recorded" {
		t.Errorf("ledger state = %q", got)
	}
	if r := text(p, "trail-rule"); r == "" || r != orig.PolicyRule {
		t.Errorf("policy rule = %q, want %q", r, orig.PolicyRule)
	}
	if got := text(p, "trail-requester"); !strings.HasPrefix(got, "Agent key ") {
		t.Errorf("requester = %q, want the demo agent's key", got)
	}
	if got := text(p, "trail-release"); got == "" {
		t.Error("the journey's release digest is missing")
	}

	// The trail is offered where the action appears.
	if href, _ := dave.get("/approvals/" + orig.ID).Doc.Find(`[data-testid="audit-trail-link"]`).Attr("href"); href != "/audit/actions/"+orig.ID {
		t.Errorf("action page links the trail at %q", href)
	}
	if href, _ := dave.get("/traces/" + orig.JourneyID).Doc.Find(`[data-testid="trace-trail-link"]`).Attr("href"); href != "/audit/actions/"+orig.ID {
		t.Errorf("trace page links the trail at %q", href)
	}

	// Alice asks for the reversal, Bob approves it, it runs: the
	// original's trail shows it, in order, with its own outcome.
	rp := alice.post("/approvals/"+orig.ID+"/reverse", alice.withCSRF(url.Values{"reason": {"customer returned the goods"}}), nil)
	revID := strings.TrimPrefix(rp.URL.Path, "/approvals/")
	rev := getAction(t, in, revID)
	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	if p := bob.post("/approvals/"+rev.ID+"/decide", bob.withCSRF(decideForm(approvals.Approve, "", rev.PayloadDigest)), nil); p.Status != http.StatusOK {
		t.Fatalf("bob approves the reversal = %d", p.Status)
	}
	waitStatus(t, bob, rev.ID, approvals.StatusExecuted)

	p = dave.get("/audit/actions/" + orig.ID)
	want = append(eventSeqs(t, in.DB, orig.ID), eventSeqs(t, in.DB, rev.ID)...)
	if got := trailSteps(p); !slices.Equal(got, want) || len(got) != 6 {
		t.Errorf("trail with reversal = %v, want %v", got, want)
	}
	reversal := p.Doc.Find(`[data-testid="trail-step-4"]`)
	if s := reversal.Find(`[data-testid="trail-sentence"]`).Text(); !strings.HasPrefix(s, "Alice Approver requested action "+rev.ID+" to reverse action "+orig.ID) {
		t.Errorf("reversal request reads %q", s)
	}
	if href, _ := reversal.Find(`a[href="/audit/actions/` + rev.ID + `"]`).Attr("href"); href == "" {
		t.Error("the reversal's steps do not link its own trail")
	}
	if row := text(p, "trail-reversal-"+rev.ID); !strings.Contains(row, "executed") {
		t.Errorf("reversals table row = %q", row)
	}
	// The reversal's own trail names the original.
	rt := dave.get("/audit/actions/" + rev.ID)
	if got, want := trailSteps(rt), eventSeqs(t, in.DB, rev.ID); !strings.Contains(text(rt, "trail-reverses"), orig.ID) || !slices.Equal(got, want) {
		t.Errorf("the reversal's trail: reverses %q, steps %v, want %v", text(rt, "trail-reverses"), got, want)
	}
}

func TestAuditPagesEscapeHTML(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	const payload = `<script>alert("x")</script>`
	if _, err := tenants.Create(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "cli"}, "evil", payload); err != nil {
		t.Fatal(err)
	}
	a := pendingAction(t, in, "ORD-1005")
	if p := alice.post("/approvals/"+a.ID+"/decide", alice.withCSRF(decideForm(approvals.Reject, payload, a.PayloadDigest)), nil); p.Status != http.StatusOK {
		t.Fatalf("reject = %d", p.Status)
	}
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	for _, path := range []string{
		"/audit", "/audit/actions/" + a.ID,
		"/audit?actor=" + url.QueryEscape(payload) + "&subject_id=" + url.QueryEscape(payload),
		"/audit?from=" + url.QueryEscape(payload),
	} {
		p := dave.get(path)
		if strings.Contains(p.Body, payload) || strings.Contains(p.Body, `<script>alert`) {
			t.Errorf("GET %s echoes the script unescaped", path)
		}
		if !strings.Contains(p.Body, "&lt;script&gt;") {
			t.Errorf("GET %s does not show the escaped text", path)
		}
	}
}

// The audit page shows the key that verifies checkpoints and exports, and
// the newest checkpoint once there is one (every export signs one).
func TestAuditPageShowsSigningKeyAndCheckpoint(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	if p := dave.get("/audit"); text(p, "chain-public-key") != "" || !strings.Contains(text(p, "chain-checkpoint"), "None yet") {
		t.Errorf("before any checkpoint: key %q, checkpoint %q", text(p, "chain-public-key"), text(p, "chain-checkpoint"))
	}
	if p := dave.get("/audit/export.jsonl"); p.Status != http.StatusOK {
		t.Fatalf("export = %d", p.Status)
	}
	signer, err := audit.LoadOrCreateSigner(filepath.Dir(in.DB.Path()))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := audit.LatestCheckpoint(context.Background(), in.DB.Read())
	if err != nil {
		t.Fatalf("no checkpoint after an export: %v", err)
	}
	p := dave.get("/audit")
	if got := text(p, "chain-public-key"); got != signer.PublicKeyText() {
		t.Errorf("public key shown = %q, want %q", got, signer.PublicKeyText())
	}
	if got := text(p, "chain-checkpoint"); !strings.Contains(got, cp.Hash) {
		t.Errorf("checkpoint shown = %q, want hash %s", got, cp.Hash)
	}
}

// A row Warden did not write, its time not in the trail's format and its
// details not JSON, is listed by its fields, and Verify names it: it once
// made the audit page, and Verify's verdict on it, a 500.
func TestAuditPageShowsARowWardenDidNotWrite(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	head, err := audit.StoredHead(context.Background(), in.DB.Read())
	if err != nil {
		t.Fatal(err)
	}
	forged := head.Seq + 1
	if _, err := in.DB.Read().Exec(`INSERT INTO audit_events (seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details, prev_hash, hash)
		VALUES (?, ?, 'principal', 'mallory', 'acme', 'tenant.rename', 'tenant', 'acme', 'not json', ?, ?)`,
		forged, "2026-12-05T22:07:11.95996446Z", head.Hash, strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}

	p := dave.get("/audit?verb=tenant.rename")
	if p.Status != http.StatusOK {
		t.Fatalf("GET /audit with a forged row = %d, want 200", p.Status)
	}
	if got := auditSeqs(t, p.Doc); !slices.Equal(got, []int64{forged}) {
		t.Errorf("GET /audit?verb=tenant.rename lists seqs %v, want the forged row %d", got, forged)
	}
	row := p.Doc.Find(`[data-testid="audit-event-` + strconv.FormatInt(forged, 10) + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="event-verb"]`).Text()); got != "tenant.rename" {
		t.Errorf("forged row's verb = %q, want tenant.rename", got)
	}
	if got, _ := row.Find(`.when time`).Attr("datetime"); !strings.HasPrefix(got, "2026-12-05T22:07:11") {
		t.Errorf("forged row's time = %q, want its recorded 2026-12-05T22:07:11", got)
	}

	p = dave.post("/audit/verify", url.Values{"_csrf": {dave.csrf()}}, nil)
	if p.Status != http.StatusOK {
		t.Fatalf("POST /audit/verify with a forged row = %d, want 200", p.Status)
	}
	if got, want := text(p, "verify-result"), "Chain broken at seq "+strconv.FormatInt(forged, 10); !strings.HasPrefix(got, want) {
		t.Errorf("verify result = %q, want %q", got, want)
	}
}

// TestAuditNamesAgentKeys: events by agents' keys read with the key's
// name on the audit page and in the CSV export (the names of a page's
// keys are looked up together, keys.Names); a key that no longer exists
// reads as its id.
func TestAuditNamesAgentKeys(t *testing.T) {
	in := startWarden(t, nil)
	var keyIDs []string
	for _, name := range []string{"refund-bot", "faq-bot", "status-bot"} {
		k, _ := newKey(t, in, name, []string{"skill:refunds"}, 600, 60, nil)
		keyIDs = append(keyIDs, k.ID)
	}
	ids := append(slices.Clone(keyIDs), "key_gone")
	var evs []audit.Event
	for i := range 8 { // a key acting twice is named in both rows
		evs = append(evs, audit.Event{Actor: audit.Actor{Type: audit.ActorKey, ID: ids[i%len(ids)]}, Tenant: "acme",
			Verb: "tenant.frozen_refused", Subject: audit.Subject{Type: "key", ID: ids[i%len(ids)]}})
	}
	appendAt(t, in.DB, evs...)
	want := map[string]string{keyIDs[0]: `Agent key "refund-bot"`, keyIDs[1]: `Agent key "faq-bot"`, keyIDs[2]: `Agent key "status-bot"`,
		"key_gone": "Agent key key_gone"}

	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	p := dave.get("/audit?verb=tenant.frozen_refused")
	var got []string
	p.Doc.Find(`[data-testid="audit-table"] tbody tr [data-testid="event-sentence"]`).Each(func(_ int, s *goquery.Selection) {
		got = append(got, strings.TrimSpace(s.Text()))
	})
	if len(got) != len(evs) {
		t.Fatalf("GET /audit?verb=tenant.frozen_refused lists %d events, want %d: %q", len(got), len(evs), got)
	}
	for i, s := range got { // newest first
		id := ids[(len(evs)-1-i)%len(ids)]
		if w := want[id] + " was refused: tenant acme is frozen"; s != w {
			t.Errorf("row %d (%s) says %q, want %q", i, id, s, w)
		}
	}

	until := url.QueryEscape(time.Now().UTC().Format(time.RFC3339Nano))
	file := dave.get("/audit/export.csv?verb=tenant.frozen_refused&until=" + until)
	recs, err := csv.NewReader(strings.NewReader(file.Body)).ReadAll()
	if err != nil || file.Status != http.StatusOK || len(recs) != len(evs)+1 {
		t.Fatalf("export = %d, %d rows, %v; want %d events", file.Status, len(recs), err, len(evs))
	}
	sentence, actor := slices.Index(recs[0], "sentence"), slices.Index(recs[0], "actor_id")
	for _, rec := range recs[1:] {
		id := strings.TrimPrefix(rec[actor], "'")
		if w := want[id] + " was refused: tenant acme is frozen"; strings.TrimPrefix(rec[sentence], "'") != w {
			t.Errorf("export row of %s says %q, want %q", id, rec[sentence], w)
		}
	}
}
