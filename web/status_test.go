package web

import (
	"strings"
	"testing"
)

func TestStatusShowsWorkNeedingReview(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	if p := b.get("/status"); !strings.Contains(text(p, "needs-review"), "Nothing needs review") {
		t.Fatalf("fresh status page: %q", text(p, "needs-review"))
	}
	if _, err := in.DB.Read().Exec(`UPDATE actions SET status = 'failed', failure = 'provider refused: account closed' WHERE summary LIKE '%$54.00%'`); err != nil {
		t.Fatal(err)
	}
	p := b.get("/status")
	got := text(p, "needs-review")
	if !strings.Contains(got, "Refund $54.00") || !strings.Contains(got, "account closed") {
		t.Errorf("needs review = %q, want the failed refund and its reason", got)
	}
	if p.Doc.Find(`[data-testid="needs-review"] a[href^="/approvals/act_"]`).Length() != 1 {
		t.Error("the failed action does not link to its page")
	}
}
