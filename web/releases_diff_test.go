package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/releases/releasetest"
)

// diffLines are the texts of the lines of one kind ("line-added",
// "line-removed") in a text diff block of a page.
func diffLines(p page, block, kind string) []string {
	var out []string
	p.Doc.Find(`[data-testid="diff-content-` + block + `"] [data-testid="` + kind + `"] td.code`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.Text())
	})
	return out
}

// TestRollbackConfirmationShowsLineDiffs: a rollback between two releases
// that differ in their prompt and in a skill file shows, before carol
// confirms, the lines that change — removed lines of the active release,
// added lines of the target — not only their digests; markup in a prompt
// is shown as text.
func TestRollbackConfirmationShowsLineDiffs(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	earlier, _ := releasetest.DiffPair(t, in.DB)
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")

	p := carol.get("/releases/rollback?" + url.Values{"agent": {releasetest.Agent}, "env": {releasetest.Env}, "digest": {earlier}}.Encode())
	if p.Status != http.StatusOK || text(p, "diff-changed") != "Changed: prompt and skills." {
		t.Fatalf("confirmation = %d, %q; want 200 and prompt and skills changed", p.Status, text(p, "diff-changed"))
	}
	for _, tt := range []struct {
		block, kind string
		want        []string
	}{
		{"prompt", "line-removed", []string{"Answer order questions briefly, quoting the order id.", "<b>Never</b> promise a delivery date."}},
		{"prompt", "line-added", []string{"Answer order questions."}},
		{"prompt", "line-same", []string{"You are Acme's order support agent.", "Ask before any refund."}},
		{"skill-refunds", "line-removed", []string{"Refund at most what remains refundable."}},
		{"skill-refunds", "line-added", []string{"Refund what the customer paid."}},
	} {
		if got := diffLines(p, tt.block, tt.kind); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s = %q, want %q", tt.block, tt.kind, got, tt.want)
		}
	}
	if got := text(p, "diff-content-skill-refunds"); !strings.Contains(got, "skills/refunds/SKILL.md") || !strings.Contains(got, "+1 −1") {
		t.Errorf("skill file block = %q, want its path and +1 −1", got)
	}
	if p.Doc.Find(`[data-testid="diff-content-skill-refunds"] [data-testid="line-skipped"]`).Length() != 1 {
		t.Error("the skill file's unchanged front matter is not folded")
	}
	if strings.Contains(p.Body, "<b>Never</b>") || p.Doc.Find(`[data-testid="line-diff"] b`).Length() != 0 {
		t.Error("markup in the prompt reached the page as markup")
	}
	if p.Doc.Find(`[data-testid="diff-content-routing"]`).Length() != 0 {
		t.Error("the unchanged routing policy is shown as a change")
	}
}
