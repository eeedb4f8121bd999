package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Skills pages are for on-call and admins: each skill with its source,
// hash and kill switch; approvers and auditors are refused and not offered
// the link.
func TestSkillPages(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "customer_email"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "customer_email", "SKILL.md")
	src := "---\nname: customer_email\ndescription: Write an e-mail to the customer of an order.\ntools: [lookup_order, send_customer_email]\nmax_steps: 2\n---\n" +
		"# Writing to customers\n\n<script>alert('x')</script>\n\nBe <img src=x onerror=alert(1)> **polite**.\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken", "SKILL.md"), []byte("no front matter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := startWardenDemo(t, map[string]string{"WARDEN_SKILL_DIR": dir})
	in.waitReady(t)
	if logs := in.Logs.String(); !strings.Contains(logs, "skill skipped") || !strings.Contains(logs, filepath.Join(dir, "broken", "SKILL.md")) ||
		!strings.Contains(logs, "no front matter") {
		t.Errorf("the malformed skill is not named with its reason in the start-up log:\n%s", logs)
	}

	for _, tc := range []struct {
		user   string
		status int
	}{{"carol", http.StatusOK}, {"erin", http.StatusOK}, {"alice", http.StatusForbidden}, {"dave", http.StatusForbidden}} {
		b := newBrowser(t, in.URL)
		b.loginDev(tc.user)
		if got := b.get("/").Doc.Find(`nav a[href="/skills"]`).Length() == 1; got != (tc.status == http.StatusOK) {
			t.Errorf("%s: navigation offers Skills = %v", tc.user, got)
		}
		for _, p := range []string{"/skills", "/skills/refunds"} {
			if got := b.get(p); got.Status != tc.status {
				t.Errorf("%s: GET %s = %d, want %d", tc.user, p, got.Status, tc.status)
			}
		}
	}

	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	idx := b.get("/skills")
	for _, name := range []string{"order_status", "order_support", "refunds", "customer_email"} {
		if idx.Doc.Find(`[data-testid="skill-`+name+`"]`).Length() != 1 {
			t.Errorf("the index lacks skill %s:\n%s", name, idx.Body)
		}
	}
	if idx.Doc.Find(`[data-testid="skill-broken"]`).Length() != 0 {
		t.Error("the malformed skill is listed")
	}
	refunds := idx.Doc.Find(`[data-testid="skill-refunds"]`).Text()
	for _, want := range []string{"lookup_order, issue_refund", "built-in", "on"} {
		if !strings.Contains(refunds, want) {
			t.Errorf("refunds row %q lacks %q", refunds, want)
		}
	}
	// The development demo's model-driven skill is embedded but not one
	// of the built-in skills a production Warden has.
	if row := idx.Doc.Find(`[data-testid="skill-model_refunds"]`).Text(); !strings.Contains(row, "development demo") || strings.Contains(row, "built-in") {
		t.Errorf("model_refunds row %q, want it labelled development demo", row)
	}
	if row := idx.Doc.Find(`[data-testid="skill-customer_email"]`).Text(); !strings.Contains(row, path) {
		t.Errorf("customer_email row %q does not name its file %s", row, path)
	}

	doc := b.get("/skills/customer_email")
	body := doc.Doc.Find(`[data-testid="skill-instructions"]`)
	inner, _ := body.Html()
	if body.Find("script, img").Length() != 0 || strings.Contains(inner, "<script") || strings.Contains(inner, "<img") {
		t.Errorf("raw HTML in the instructions reached the page:\n%s", inner)
	}
	// The document's "# Writing to customers" sits under the page's h1
	// (the skill's name): one h1 a page.
	if n := doc.Doc.Find("h1").Length(); n != 1 {
		t.Errorf("the skill's page has %d h1 headings, want one", n)
	}
	if body.Find("h2").Text() != "Writing to customers" || body.Find("strong").Text() != "polite" || !strings.Contains(body.Text(), "<script>alert('x')</script>") {
		t.Errorf("instructions not rendered as markdown with raw HTML shown as text:\n%s", inner)
	}
	if h := doc.Doc.Find(`[data-testid="skill-hash"]`).Text(); len(h) != 64 {
		t.Errorf("skill hash = %q, want 64 hex digits", h)
	}
	if p := b.get("/skills/nope"); p.Status != http.StatusNotFound {
		t.Errorf("unknown skill = %d, want 404", p.Status)
	}
}
