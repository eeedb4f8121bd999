package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
)

// searchRig is the demo (acme's three pending refunds: ORD-1004 $2,400,
// ORD-1005 $45.50, ORD-1002 $54) plus a second tenant, globex, with a
// refund on an order of the same name and amount: what tenant scope must
// keep apart.
func searchRig(t *testing.T) (*instance, approvals.Action) {
	t.Helper()
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	globex := adminTenant(t, in.DB, "globex", "Globex")
	r := in.Server.redactor.(*redact.Redactor)
	theirs := createActions(t, in, globex, 1, 240000, func(s *approvals.Spec) {
		s.Summary = "Refund $2,400.00 for globex order ORD-1004"
		s.Target = approvals.TargetOf(r, "ORD-1004")
	})[0]
	return in, theirs
}

// resultIDs lists the actions a search or the Actions list shows.
func resultIDs(p page) []string {
	var ids []string
	p.Doc.Find(`tr[data-testid^="action-act_"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		ids = append(ids, strings.TrimPrefix(id, "action-"))
	})
	return ids
}

func TestSearchStaysInTheViewersScope(t *testing.T) {
	in, theirs := searchRig(t)
	ours := pendingAction(t, in, "ORD-1004")

	alice := newBrowser(t, in.URL)
	alice.loginDev("alice") // approver of acme
	home := alice.get("/")
	if home.Doc.Find(`[data-testid="header-search"]`).Length() != 1 {
		t.Fatal("the header has no search box")
	}
	if nav := home.Doc.Find("nav.nav").Text(); !strings.Contains(nav, "Actions") {
		t.Errorf("approver's navigation = %q, want Actions", nav)
	}
	for _, q := range []string{"ORD-1004", "ord-1004", " ORD-1004 ", "$2,400.00", "2400", "2,400.00", "USD 2400", "2400 usd", ours.ID} {
		p := alice.get("/search?q=" + url.QueryEscape(q))
		if p.Status != http.StatusOK {
			t.Fatalf("alice searches %q: %d", q, p.Status)
		}
		got := resultIDs(p)
		if !slices.Contains(got, ours.ID) {
			t.Errorf("alice searches %q: actions %v, want acme's ORD-1004 refund %s", q, got, ours.ID)
		}
		if slices.Contains(got, theirs.ID) {
			t.Errorf("alice searches %q: shown globex's action %s, outside her tenants", q, theirs.ID)
		}
		if p.Doc.Find(`[data-testid="search-journeys"], [data-testid="search-events"]`).Length() != 0 {
			t.Errorf("alice searches %q: journeys or audit events shown to an approver, who may open neither", q)
		}
	}
	// globex's action by its id: the same "nothing" as an id that does
	// not exist, not a 403 that tells it exists.
	p := alice.get("/search?q=" + theirs.ID)
	if p.Status != http.StatusOK || len(resultIDs(p)) != 0 || !strings.Contains(text(p, "search-empty"), "Nothing in your tenants matches") {
		t.Errorf("alice searches globex's action id: %d, %v, %q", p.Status, resultIDs(p), text(p, "search-empty"))
	}
	// An amount that matches nothing, and words that match nothing.
	for _, q := range []string{"$1,234.56", "ORD-9999"} {
		if p := alice.get("/search?q=" + url.QueryEscape(q)); len(resultIDs(p)) != 0 || text(p, "search-empty") == "" {
			t.Errorf("alice searches %q: %v, want the empty state", q, resultIDs(p))
		}
	}
	// The Actions list keeps to her tenants too.
	if got := resultIDs(alice.get("/actions")); slices.Contains(got, theirs.ID) || len(got) != 3 {
		t.Errorf("alice's Actions list = %v, want acme's three and not globex's", got)
	}
	if p := alice.get("/actions?tenant=globex"); p.Status != http.StatusForbidden {
		t.Errorf("alice filters Actions by globex: %d, want 403", p.Status)
	}

	// carol, on call for every tenant, sees both, and the journey that
	// asked for acme's; dave, the auditor, the audit events as well.
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	p = carol.get("/search?q=ORD-1004")
	if got := resultIDs(p); !slices.Contains(got, ours.ID) || !slices.Contains(got, theirs.ID) {
		t.Errorf("carol searches ORD-1004: %v, want both tenants' refunds", got)
	}
	if p.Doc.Find(`[data-testid="journey-`+ours.JourneyID+`"]`).Length() != 1 {
		t.Errorf("carol's search does not list the journey %s that asked", ours.JourneyID)
	}
	if p.Doc.Find(`[data-testid="search-events"]`).Length() != 0 {
		t.Error("carol (on call) is shown audit events; she may not read the trail")
	}
	allLinksOpen(t, carol, p)

	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	p = dave.get("/search?q=ORD-1004")
	if !strings.Contains(p.Doc.Find(`[data-testid="search-events"]`).Text(), "action.requested") {
		t.Errorf("dave's search shows no action.requested event:\n%s", p.Doc.Find("main").Text())
	}
	allLinksOpen(t, dave, p)

	// People and keys by the start of their name: alice's approvals once
	// she approved; the demo key's actions.
	p = dave.get("/search?q=Demo%20key")
	if got := resultIDs(p); !slices.Contains(got, ours.ID) {
		t.Errorf("dave searches the demo key's name: %v, want its actions", got)
	}
	if !strings.Contains(text(p, "search-who"), "key ") {
		t.Errorf("search-who = %q, want the key named", text(p, "search-who"))
	}
	allLinksOpen(t, dave, p)
	p = alice.get("/search?q=alice")
	if got := resultIDs(p); len(got) != 0 {
		t.Errorf("alice has decided nothing yet, but searching her name lists %v", got)
	}
	// Who else has signed in is not hers to learn: dave has nothing in
	// her tenants she may open, so a search of his name does not name him.
	if p := alice.get("/search?q=dave"); text(p, "search-who") != "" || text(p, "search-empty") == "" {
		t.Errorf("alice searches dave: %q, want nothing and no name", text(p, "search-who"))
	}
	alice.post("/approvals/"+ours.ID+"/decide", alice.withCSRF(decideForm("approve", "", ours.PayloadDigest)), nil)
	if got := resultIDs(alice.get("/search?q=Alice")); !slices.Contains(got, ours.ID) {
		t.Errorf("after alice approved, searching her name lists %v, want %s", got, ours.ID)
	}
}

// allLinksOpen follows every link of the search results and wants each
// to open for the viewer.
func allLinksOpen(t *testing.T, b *browser, p page) {
	t.Helper()
	p.Doc.Find("main a[href]").Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		if !strings.HasPrefix(href, "/") {
			return
		}
		if got := b.get(href); got.Status != http.StatusOK {
			t.Errorf("the result link %s answers %d", href, got.Status)
		}
	})
}

func TestSearchSaysWhatIsWrongWithIt(t *testing.T) {
	in, _ := searchRig(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	tests := []struct{ q, want string }{
		{strings.Repeat("ORD-1004 ", 30), "too long"},
		{"$2,40.00", "not an amount"},
		{"$abc", "not an amount"},
		{"2,4,00", "not an amount"},
		{"$24.001", "2 decimals"},
		{"2400 EUR USD", ""}, // not an amount at all: words
		{"XYZ 2400", ""},     // a target such as a ticket, not a bad amount
		{"   ", "Type an order id"},
	}
	for _, tt := range tests {
		p := b.get("/search?q=" + url.QueryEscape(tt.q))
		if tt.want == "" {
			if p.Status != http.StatusOK || text(p, "search-error") != "" {
				t.Errorf("search %q: %d %q, want it searched", tt.q, p.Status, text(p, "search-error"))
			}
			continue
		}
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("search %q: %d, want 422", tt.q, p.Status)
		}
		if msg := text(p, "search-error"); !strings.Contains(msg, tt.want) {
			t.Errorf("search %q says %q, want %q", tt.q, msg, tt.want)
		}
		// The page, not an error page: the search form comes back with
		// what was typed (cut to 200 characters) and the navigation.
		if p.Doc.Find(`[data-testid="search-form"]`).Length() != 1 || p.Doc.Find("nav.nav").Length() != 1 {
			t.Errorf("search %q: not the search page", tt.q)
		}
		if v, _ := p.Doc.Find("#search-q").Attr("value"); len([]rune(v)) > 201 {
			t.Errorf("search %q shows back %d characters", tt.q, len([]rune(v)))
		}
	}
	if p := b.get("/search"); p.Status != http.StatusOK || text(p, "search-error") != "" {
		t.Errorf("/search without a query: %d %q, want the empty form", p.Status, text(p, "search-error"))
	}
}

func TestActionListFiltersAndPages(t *testing.T) {
	in, theirs := searchRig(t)
	ours := pendingAction(t, in, "ORD-1004")
	shirt := pendingAction(t, in, "ORD-1002")
	acme := adminTenantBySlug(t, in.DB, "acme")
	// An executed refund, as if approved and run, and sixty old ones to
	// page through.
	err := in.DB.Transact(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `UPDATE actions SET status = 'executed' WHERE id = ?`, shirt.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	many := createActions(t, in, acme, 60, 100, func(s *approvals.Spec) { s.Tool.Name = "send_customer_email" })
	total := countRows(t, in.DB, `SELECT COUNT(*) FROM actions`)

	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	tests := []struct {
		query string
		want  []string
	}{
		{"?status=executed", []string{shirt.ID}},
		{"?status=executed&tool=issue_refund", []string{shirt.ID}},
		{"?status=executed&tool=send_customer_email", nil},
		{"?target=ord-1004", []string{theirs.ID, ours.ID}},
		{"?target=ORD-1004&tenant=acme", []string{ours.ID}},
		{"?min=2400&max=2400", []string{theirs.ID, ours.ID}},
		{"?min=54&max=54&status=executed", []string{shirt.ID}},
		{"?to=2001-01-01", nil},
	}
	for _, tt := range tests {
		p := b.get("/actions" + tt.query)
		if p.Status != http.StatusOK {
			t.Errorf("/actions%s: %d", tt.query, p.Status)
			continue
		}
		if got := resultIDs(p); !slices.Equal(got, tt.want) {
			t.Errorf("/actions%s lists %v, want %v", tt.query, got, tt.want)
		}
		if len(tt.want) == 0 && !strings.Contains(text(p, "actions-empty"), "No actions match") {
			t.Errorf("/actions%s: no rows and no empty state", tt.query)
		}
	}
	// Newest first, 50 a page; Older and Newer walk the rest.
	p := b.get("/actions")
	first := resultIDs(p)
	if len(first) != 50 || first[0] != many[59].ID {
		t.Fatalf("first page: %d rows starting %v, want 50 starting with the newest %s", len(first), first[:1], many[59].ID)
	}
	older, _ := p.Doc.Find(`[data-testid="actions-older"]`).Attr("href")
	p = b.get(older)
	second := resultIDs(p)
	if len(second) != total-50 || slices.ContainsFunc(second, func(id string) bool { return slices.Contains(first, id) }) {
		t.Errorf("second page: %d rows %v, want the other %d", len(second), second, total-50)
	}
	newer, _ := p.Doc.Find(`[data-testid="actions-newer"]`).Attr("href")
	if got := resultIDs(b.get(newer)); !slices.Equal(got, first) {
		t.Errorf("back to the first page: %v", got)
	}
	// A filter typed wrong is said next to its field, and nothing listed.
	for q, want := range map[string]string{
		"?min=abc":                            "Lowest amount",
		"?min=10&max=5":                       "below the lowest",
		"?from=yesterday":                     "2026-01-31",
		"?status=done":                        "Choose a status",
		"?target=" + strings.Repeat("x", 201): "Too long",
	} {
		p := b.get("/actions" + q)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "form-errors"), want) || len(resultIDs(p)) != 0 {
			t.Errorf("/actions%s: %d %q, want 422 saying %q", q, p.Status, text(p, "form-errors"), want)
		}
	}
	if p := b.get("/actions?after=bogus"); p.Status != http.StatusBadRequest {
		t.Errorf("a cursor Warden did not write: %d, want 400", p.Status)
	}
}
