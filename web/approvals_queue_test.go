package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/store"
)

// The demo's three pending refunds, as alice's queue shows them.
const (
	rowDesk  = "Refund $2,400.00 to account ••9182 for order ORD-1004 | acme | $2,400.00 | 0 of 2"
	rowTwice = "Refund $45.50 to account ••7819 for order ORD-1005 | acme | $45.50 | 0 of 1"
	rowShirt = "Refund $54.00 to account ••7741 for order ORD-1002 | acme | $54.00 | 0 of 1"
)

func TestApprovalQueueSortsAndFilters(t *testing.T) {
	_, b := approvalSession(t, "alice")

	p := b.get("/approvals")
	if p.Status != http.StatusOK {
		t.Fatalf("GET /approvals = %d", p.Status)
	}
	if nav := p.Doc.Find("nav.nav").Text(); !strings.Contains(nav, "Approvals") {
		t.Errorf("approver's navigation = %q, want an Approvals entry", nav)
	}
	if got := queueRows(p); len(got) != 3 || !slices.Contains(got, rowDesk) || !slices.Contains(got, rowTwice) || !slices.Contains(got, rowShirt) {
		t.Fatalf("queue rows = %q, want the demo's three refunds", got)
	}
	row := p.Doc.Find(`[data-testid="approvals-table"] tbody tr`).First()
	if age, exp := strings.TrimSpace(row.Find(".age").Text()), strings.TrimSpace(row.Find(".expiry").Text()); age != "just now" || !strings.HasPrefix(exp, "in 23h") {
		t.Errorf("age %q, expiry %q; want just now and in 23h …", age, exp)
	}
	if href, _ := row.Find("a.queue-summary").Attr("href"); !strings.HasPrefix(href, "/approvals/act_") {
		t.Errorf("row links to %q, want the action page", href)
	}

	tests := []struct {
		query string
		want  []string
	}{
		{"?sort=amount", []string{rowDesk, rowShirt, rowTwice}},
		{"?sort=age", []string{rowDesk, rowTwice, rowShirt}}, // the demo asks in this order
		{"?min=50", []string{rowDesk, rowShirt}},
		{"?min=50&sort=amount", []string{rowDesk, rowShirt}},
		{"?min=45.50&max=54&sort=amount", []string{rowShirt, rowTwice}},
		{"?min=2400.00", []string{rowDesk}},
		{"?max=45.5", []string{rowTwice}},
		{"?max=45.49", nil},
		{"?tool=issue_refund&sort=amount", []string{rowDesk, rowShirt, rowTwice}},
		{"?tool=send_customer_email", nil},
		{"?tenant=acme&sort=amount&min=$54", []string{rowDesk, rowShirt}},
	}
	for _, tt := range tests {
		p := b.get("/approvals" + tt.query)
		if p.Status != http.StatusOK {
			t.Errorf("%s: %d", tt.query, p.Status)
			continue
		}
		if got := queueRows(p); !slices.Equal(got, tt.want) {
			t.Errorf("/approvals%s lists\n%q\nwant\n%q", tt.query, got, tt.want)
		}
		if len(tt.want) == 0 && !strings.Contains(text(p, "approvals-empty"), "No pending actions match") {
			t.Errorf("/approvals%s: no rows and no no-match message", tt.query)
		}
	}
	// The form keeps what was chosen.
	p = b.get("/approvals?min=50&sort=amount")
	if v, _ := p.Doc.Find("#min").Attr("value"); v != "50" {
		t.Errorf("min field shows %q", v)
	}
	if v, _ := p.Doc.Find(`#sort option[selected]`).Attr("value"); v != approvals.SortAmount {
		t.Errorf("sort shows %q", v)
	}

	// Amounts are parsed exactly; what is not an amount is refused with
	// the field's message and nothing listed.
	bad := []struct{ query, field, want string }{
		{"?min=fifty", "min", "digits"},
		{"?min=1.005", "min", "two decimal places"},
		{"?max=-3", "max", "negative"},
		{"?min=100&max=50", "max", "below the lowest"},
	}
	for _, tt := range bad {
		p := b.get("/approvals" + tt.query)
		if p.Status != http.StatusBadRequest || !strings.Contains(text(p, "error-"+tt.field), tt.want) {
			t.Errorf("/approvals%s = %d, %s error %q; want 400 with %q", tt.query, p.Status, tt.field, text(p, "error-"+tt.field), tt.want)
		}
		if len(queueRows(p)) != 0 {
			t.Errorf("/approvals%s lists rows despite the bad filter", tt.query)
		}
	}
	for _, q := range []string{"?sort=cheapest", "?after=0", "?before=two"} {
		if p := b.get("/approvals" + q); p.Status != http.StatusBadRequest {
			t.Errorf("/approvals%s = %d, want 400", q, p.Status)
		}
	}
}

func TestApprovalQueueTenantScope(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	globex := adminTenant(t, in.DB, "globex", "Globex")
	other := createActions(t, in, globex, 1, 99_00)[0]

	p := alice.get("/approvals")
	if ids := queueActionIDs(p); len(ids) != 3 || slices.Contains(ids, other.ID) {
		t.Errorf("alice's queue = %v, want acme's three and not globex's %s", ids, other.ID)
	}
	if p := alice.get("/approvals/rows"); strings.Contains(p.Body, other.ID) {
		t.Error("alice's rows partial shows globex's action")
	}
	if p := alice.get("/approvals?tenant=globex"); p.Status != http.StatusForbidden {
		t.Errorf("filter on globex = %d, want 403", p.Status)
	}
	// Another tenant's action answers exactly as an unknown id does: the
	// answer does not tell alice it exists.
	unknown := alice.get("/approvals/act_01JNOSUCHACTION00000000000")
	if p := alice.get("/approvals/" + other.ID); p.Status != http.StatusNotFound || text(p, "error-message") != text(unknown, "error-message") || strings.Contains(p.Body, "globex") {
		t.Errorf("globex's action page = %d %q, want 404 like an unknown id (%d %q), not naming globex", p.Status, text(p, "error-message"), unknown.Status, text(unknown, "error-message"))
	}
	form := alice.withCSRF(decideForm(approvals.Approve, "", other.PayloadDigest))
	if p := alice.post("/approvals/"+other.ID+"/decide", form, nil); p.Status != http.StatusNotFound {
		t.Errorf("deciding globex's action = %d, want 404", p.Status)
	}

	if n := decisionCount(t, in, other.ID); n != 0 {
		t.Errorf("%d decisions recorded on an out-of-scope action", n)
	}
	if p := alice.get("/approvals/act_nope"); p.Status != http.StatusNotFound {
		t.Errorf("unknown action = %d, want 404", p.Status)
	}

	// Readers in scope see the page without the forms; only approvers
	// have a queue.
	for _, user := range []string{"dave", "carol", "erin"} {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		p := b.get("/approvals/" + other.ID)
		if p.Status != http.StatusOK || text(p, "action-summary") != other.Summary {
			t.Errorf("%s reads globex's action: %d %q", user, p.Status, text(p, "action-summary"))
		}
		if p.Doc.Find(`[data-testid="approve-form"], [data-testid="reject-form"]`).Length() != 0 {
			t.Errorf("%s, who is no approver, is offered the decision forms", user)
		}
		if p := b.get("/approvals"); p.Status != http.StatusForbidden {
			t.Errorf("%s opens the queue: %d, want 403", user, p.Status)
		}
		if nav := b.get("/").Doc.Find("nav.nav").Text(); strings.Contains(nav, "Approvals") {
			t.Errorf("%s's navigation offers Approvals: %q", user, nav)
		}
	}
}

func TestApprovalQueuePages(t *testing.T) {
	in, b := approvalSession(t, "alice")
	createActions(t, in, adminTenantBySlug(t, in.DB, "acme"), 30, 100)

	first := b.get("/approvals?sort=amount")
	one := queueActionIDs(first)
	if len(one) != 25 {
		t.Fatalf("first page has %d rows, want 25", len(one))
	}
	if c := text(first, "queue-count"); !strings.Contains(c, "33 pending actions") {
		t.Errorf("count = %q, want 33 pending", c)
	}
	next, ok := first.Doc.Find(`[data-testid="queue-next"]`).Attr("href")
	if !ok || first.Doc.Find(`[data-testid="queue-prev"]`).Length() != 0 {
		t.Fatalf("first page: next %q, prev shown %v", next, first.Doc.Find(`[data-testid="queue-prev"]`).Length() != 0)
	}
	if !strings.HasPrefix(next, "/approvals?after=") || !strings.HasSuffix(next, "&sort=amount") {
		t.Errorf("next page link = %q, want the same sort after the last row shown", next)
	}
	second := b.get(next)
	two := queueActionIDs(second)
	if len(two) != 8 {
		t.Fatalf("second page has %d rows, want 8", len(two))
	}
	for _, id := range two {
		if slices.Contains(one, id) {
			t.Errorf("%s is on both pages", id)
		}
	}
	if second.Doc.Find(`[data-testid="queue-next"]`).Length() != 0 || second.Doc.Find(`[data-testid="queue-prev"]`).Length() != 1 {
		t.Error("the last page offers a next page or no previous page")
	}
	// Largest first across pages: the smallest test refund ($1.00) is last.
	if last := queueRows(second)[7]; !strings.Contains(last, "$1.00") {
		t.Errorf("last row = %q, want the $1.00 refund", last)
	}
	prev, _ := second.Doc.Find(`[data-testid="queue-prev"]`).Attr("href")
	if back := queueActionIDs(b.get(prev)); !slices.Equal(back, one) {
		t.Errorf("the previous page of the second is %v, want the first page %v", back, one)
	}
	// A page whose rows were all decided meanwhile is empty, and says so.
	last := store.Cursor{Key: "-1", ID: "act_zzzzzzzzzzzzzzzzzzzzzzzzzz"}
	if p := b.get("/approvals?sort=amount&after=" + last.String()); len(queueActionIDs(p)) != 0 || !strings.Contains(text(p, "approvals-empty"), "nothing on this page") {
		t.Errorf("a page past the end: %q", text(p, "approvals-empty"))
	}
}

func TestApprovalQueueEmpty(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("alice")
	p := b.get("/approvals")
	if p.Status != http.StatusOK || !strings.Contains(text(p, "approvals-empty"), "Nothing is waiting for you") {
		t.Errorf("empty queue = %d %q, want the empty state", p.Status, text(p, "approvals-empty"))
	}
	if p.Doc.Find(`[data-testid="approvals-table"]`).Length() != 0 {
		t.Error("the empty queue shows a table")
	}
}

func TestApprovalQueueRowsPartial(t *testing.T) {
	in, b := approvalSession(t, "alice")
	full := b.get("/approvals?sort=amount&min=50")
	rowsURL, _ := full.Doc.Find(`[data-queue-rows]`).Attr("data-queue-rows")
	if rowsURL != "/approvals/rows?min=50&sort=amount" {
		t.Fatalf("rows partial URL = %q, want the same query", rowsURL)
	}
	if full.Doc.Find(`script[src="/static/queue.js"]`).Length() != 1 {
		t.Error("the queue does not load queue.js")
	}
	if href, _ := full.Doc.Find(`[data-testid="queue-refresh"]`).Attr("href"); href != "/approvals?min=50&sort=amount" {
		t.Errorf("Refresh link = %q, want the same query", href)
	}
	part := b.get(rowsURL)
	if part.Status != http.StatusOK || part.Doc.Find("header.topbar").Length() != 0 {
		t.Fatalf("partial = %d, with layout %v", part.Status, part.Doc.Find("header.topbar").Length() != 0)
	}
	if got, want := queueRows(part), queueRows(full); !slices.Equal(got, want) || len(got) != 2 {
		t.Errorf("partial rows = %q, page rows = %q", got, want)
	}
	if cc := part.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("partial Cache-Control = %q", cc)
	}
	// A decision shows up in the next refresh.
	desk := pendingAction(t, in, "ORD-1004")
	b.post("/approvals/"+desk.ID+"/decide", b.withCSRF(decideForm(approvals.Approve, "", desk.PayloadDigest)), nil)
	if got := queueRows(b.get(rowsURL)); len(got) != 2 || !strings.HasSuffix(got[0], "1 of 2") {
		t.Errorf("after alice's approval the partial shows %q", got)
	}
	// Same checks as the page: signed out goes to sign in, other roles get 403.
	if p := newBrowser(t, in.URL).noRedirect().get(rowsURL); p.Status != http.StatusSeeOther {
		t.Errorf("anonymous partial = %d, want 303 to sign in", p.Status)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	if p := carol.get(rowsURL); p.Status != http.StatusForbidden {
		t.Errorf("on-call partial = %d, want 403", p.Status)
	}
	// The script is served, from Warden itself.
	js := b.get("/static/queue.js")
	if js.Status != http.StatusOK || !strings.Contains(js.Header.Get("Content-Type"), "javascript") || !strings.Contains(js.Body, "data-queue-rows") {
		t.Errorf("GET /static/queue.js = %d %s", js.Status, js.Header.Get("Content-Type"))
	}
}

// Text an agent wrote (summary, reason, arguments) is shown escaped.
func TestApprovalPagesEscapeAgentText(t *testing.T) {
	in, b := approvalSession(t, "alice")
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	a := createActions(t, in, adminTenantBySlug(t, in.DB, "acme"), 1, 500, func(s *approvals.Spec) {
		s.Summary, s.Reason, s.Targets = "Refund "+evil, evil, []string{evil}
	})[0]
	for _, path := range []string{"/approvals", "/approvals/rows", "/approvals/" + a.ID} {
		p := b.get(path)
		if strings.Contains(p.Body, evil) || p.Doc.Find(`img[src="x"]`).Length() != 0 {
			t.Errorf("%s renders the agent's HTML", path)
		}
		if !strings.Contains(p.Doc.Text(), evil) {
			t.Errorf("%s does not show the agent's text at all", path)
		}
	}
}
