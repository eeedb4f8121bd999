package web

import (
	"encoding/csv"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
)

// TestAuditExportNamesTheApprovers: alice and bob approve the $2,400 refund
// in the console; dave, an auditor, downloads the CSV export and can say
// who approved from the file alone — names, e-mails, the sentence and the
// amount — and the file verifies. The audit page and the decision trail
// show the recorded e-mails too.
func TestAuditExportNamesTheApprovers(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	desk := pendingAction(t, in, "ORD-1004")
	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	for _, b := range []*browser{alice, bob} {
		p := b.get("/approvals/" + desk.ID)
		p = b.post("/approvals/"+desk.ID+"/decide", b.withCSRF(decideForm(approvals.Approve, "checked", digestOnPage(t, p, "approve-form"))), nil)
		if p.Status != http.StatusOK {
			t.Fatalf("approve = %d", p.Status)
		}
	}

	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	until := url.QueryEscape(time.Now().UTC().Format(time.RFC3339Nano))
	file := dave.get("/audit/export.csv?subject_type=action&subject_id=" + desk.ID + "&until=" + until)
	if file.Status != http.StatusOK {
		t.Fatalf("export = %d", file.Status)
	}
	recs, err := csv.NewReader(strings.NewReader(file.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	col := func(rec []string, name string) string { return strings.TrimPrefix(rec[slices.Index(head, name)], "'") }
	for _, name := range []string{"actor_name", "actor_email", "sentence", "amount"} {
		if !slices.Contains(head, name) {
			t.Fatalf("CSV header %q has no %s column", head, name)
		}
	}
	approvedBy := map[string]string{}
	for _, rec := range recs[1:] {
		verb := col(rec, "verb")
		if verb != "action.approval_recorded" && verb != "action.approved" {
			continue
		}
		approvedBy[col(rec, "actor_email")] = col(rec, "actor_name")
		if got := col(rec, "amount"); got != "2400.00 USD" {
			t.Errorf("%s row amount = %q, want 2400.00 USD", verb, got)
		}
		if s := col(rec, "sentence"); !strings.HasPrefix(s, col(rec, "actor_name")+" approved action "+desk.ID+" — Refund $2,400.00") {
			t.Errorf("%s row sentence = %q, want the approver's name, the action and its summary", verb, s)
		}
	}
	if want := map[string]string{"alice@example.com": "Alice Approver", "bob@example.com": "Bob Approver"}; !maps.Equal(approvedBy, want) {
		t.Errorf("approvers in the export = %v, want %v", approvedBy, want)
	}

	mp := dave.get("/audit/export.csv.manifest.json?" + file.URL.RawQuery)
	m, err := audit.ReadManifest(strings.NewReader(mp.Body))
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := audit.VerifyExport(strings.NewReader(file.Body), m, installationKey(t, in.DB).PublicKey()); err != nil || !rep.OK() {
		t.Errorf("VerifyExport = %+v, %v; want verified", rep, err)
	}

	trail := dave.get("/audit/actions/" + desk.ID)
	var who []string
	trail.Doc.Find(`[data-testid="trail-actor"]`).Each(func(_ int, s *goquery.Selection) { who = append(who, s.Text()) })
	for _, want := range []string{"Alice Approver <alice@example.com>", "Bob Approver <bob@example.com>"} {
		if !slices.Contains(who, want) {
			t.Errorf("decision trail names %q, want %q among them", who, want)
		}
	}
	page := dave.get("/audit?subject_type=action&subject_id=" + desk.ID)
	if !strings.Contains(page.Doc.Find(`[data-testid="event-actor-email"]`).Text(), "bob@example.com") {
		t.Errorf("audit page shows no recorded e-mail of bob")
	}
}
