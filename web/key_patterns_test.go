package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A pattern scope is typed on the key form, kept as written, shown as
// such on the key's page; a malformed one is refused with the form kept.
func TestAdminKeyCreateAcceptsScopePatterns(t *testing.T) {
	in, b := adminSession(t, "erin")
	form := b.get("/keys/new")
	if form.Doc.Find(`input[name="scope_patterns"]`).Length() != 1 {
		t.Fatal("the key form has no input for pattern scopes")
	}
	bad := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {"pattern-bot"}, "scopes": {"tool:lookup_order"}, "scope_patterns": {"model:*-mini"},
		"rate_per_min": {"60"}, "burst": {"10"},
	}), nil)
	if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(text(bad, "error-scopes"), "one *, at its end") {
		t.Errorf("model:*-mini = %d: %q", bad.Status, text(bad, "error-scopes"))
	}
	if v, _ := bad.Doc.Find(`input[name="scope_patterns"]`).Attr("value"); v != "model:*-mini" {
		t.Errorf("the typed pattern was not kept: %q", v)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM virtual_keys WHERE name = 'pattern-bot'`); n != 0 {
		t.Fatal("a key with a malformed pattern was made")
	}
	res := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {"pattern-bot"}, "scopes": {"tool:lookup_order"}, "scope_patterns": {" model:gpt-*  tool:lookup_* "},
		"rate_per_min": {"60"}, "burst": {"10"},
	}), nil)
	if res.Status != http.StatusOK || !strings.HasSuffix(res.URL.Path, "/created") {
		t.Fatalf("create with patterns = %d at %s: %s", res.Status, res.URL, text(res, "form-errors"))
	}
	id := strings.TrimSuffix(strings.TrimPrefix(res.URL.Path, "/keys/"), "/created")
	show := b.get("/keys/" + id)
	var shown []string
	titled := ""
	show.Doc.Find(`[data-testid="key-scope"]`).Each(func(_ int, s *goquery.Selection) {
		shown = append(shown, s.Text())
		if s.Text() == "model:gpt-*" {
			titled, _ = s.Attr("title")
		}
	})
	if strings.Join(shown, " ") != "model:gpt-* tool:lookup_* tool:lookup_order" {
		t.Errorf("the key page shows scopes %q", shown)
	}
	if !strings.Contains(titled, "starts with gpt-") {
		t.Errorf("the pattern is not explained where it is shown: title %q", titled)
	}
}
