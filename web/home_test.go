package web

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func homeIDs(p page, list string) []string {
	var out []string
	p.Doc.Find(`[data-testid="` + list + `-list"] li`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		out = append(out, strings.TrimPrefix(id, list+"-"))
	})
	return out
}

// An approver's home is their inbox: the demo's three refunds wait for
// alice; once she approves the $2,400 one (it needs two approvers) it
// waits on others, and her decision is listed with its outcome.
func TestHomeApproverInbox(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	home := alice.get("/")
	if got := text(home, "waiting-count"); got != "3" {
		t.Fatalf("waiting for alice = %q, want 3\n%s", got, text(home, "home-waiting"))
	}
	big := pendingAction(t, in, "$2,400")
	if got := homeIDs(home, "waiting"); !containsStr(got, big.ID) {
		t.Errorf("waiting list %v lacks the $2,400 refund %s", got, big.ID)
	}
	if got := homeIDs(home, "on-others"); len(got) != 0 {
		t.Errorf("waiting on others = %v before any decision, want none", got)
	}
	p := alice.post("/approvals/"+big.ID+"/decide", alice.withCSRF(decideForm("approve", "checked the order", big.PayloadDigest)), nil)
	if p.Status != 200 {
		t.Fatalf("approve: %d", p.Status)
	}
	home = alice.get("/")
	if got := text(home, "waiting-count"); got != "2" {
		t.Errorf("after approving, waiting for alice = %q, want 2", got)
	}
	if got := homeIDs(home, "waiting"); containsStr(got, big.ID) {
		t.Errorf("the refund alice approved is still offered to her: %v", got)
	}
	if got := homeIDs(home, "on-others"); len(got) != 1 || got[0] != big.ID {
		t.Errorf("waiting on others = %v, want [%s]", got, big.ID)
	}
	if got := text(home, "on-others-"+big.ID); strings.Contains(got, "1 of 2 approvals") || !strings.Contains(got, "needs 1 more approval") {
		t.Errorf("waiting-on-others row = %q, want \"needs 1 more approval\" said once (not also \"1 of 2 approvals\")", got)
	}
	row := home.Doc.Find(`[data-testid="decision-` + big.ID + `"]`)
	if !strings.Contains(row.Text(), "You approved") || strings.TrimSpace(row.Find(`[data-testid="decision-outcome"]`).Text()) != "Awaiting approval" {
		t.Errorf("recent decision = %q, want You approved … Awaiting approval", row.Text())
	}

	// bob, the second approver, still has it waiting for him.
	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	if got := homeIDs(bob.get("/"), "waiting"); !containsStr(got, big.ID) {
		t.Errorf("bob's waiting list %v lacks the refund alice approved", got)
	}
}

func containsStr(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// On-call's home lists failed actions, frozen tenants and switched-off
// tools; an auditor's the chain and exports; mallory, who holds no role,
// sees no count of anything.
func TestHomePerRole(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	if _, err := in.DB.Read().Exec(`UPDATE actions SET status = 'failed', failure = 'provider refused: account closed' WHERE summary LIKE '%$54.00%'`); err != nil {
		t.Fatal(err)
	}
	if _, err := in.DB.Read().Exec(`UPDATE tenants SET frozen = 1 WHERE slug = 'acme'`); err != nil {
		t.Fatal(err)
	}
	if _, err := in.DB.Read().Exec(`UPDATE tools SET enabled = 0 WHERE name = (SELECT name FROM tools ORDER BY name LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	carol := newBrowser(t, in.URL)
	home := carol.loginDev("carol")
	if got := text(home, "home-failed"); !strings.Contains(got, "Refund $54.00") || !strings.Contains(got, "account closed") {
		t.Errorf("carol's failed actions = %q", got)
	}
	if home.Doc.Find(`[data-testid="home-frozen-acme"]`).Length() != 1 {
		t.Errorf("carol's home does not say acme is frozen: %q", text(home, "home-off"))
	}
	if home.Doc.Find(`[data-testid^="home-off-tool-"]`).Length() != 1 {
		t.Errorf("carol's home does not list the switched-off tool: %q", text(home, "home-off"))
	}
	if home.Doc.Find(`[data-testid="home-waiting"]`).Length() != 0 {
		t.Error("carol, who is not an approver, is shown an approval inbox")
	}

	dave := newBrowser(t, in.URL)
	home = dave.loginDev("dave")
	if home.Doc.Find(`[data-testid="home-auditor"]`).Length() != 1 || !strings.HasPrefix(text(home, "home-chain-head"), "seq ") {
		t.Errorf("dave's home has no chain status: %q", text(home, "home-auditor"))
	}
	dave.get("/audit/export.jsonl")
	home = dave.get("/")
	if home.Doc.Find(`[data-testid="home-exports"] tbody tr`).Length() != 1 {
		t.Errorf("dave's recent exports = %q, want the one he made", text(home, "home-exports"))
	}

	mallory := newBrowser(t, in.URL)
	home = mallory.loginDev("mallory")
	for _, id := range []string{"count-tenants", "count-audit", "at-a-glance", "home-waiting", "home-oncall", "home-auditor"} {
		if home.Doc.Find(`[data-testid="`+id+`"]`).Length() != 0 {
			t.Errorf("mallory, who has no role, is shown %s", id)
		}
	}
}
