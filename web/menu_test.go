package web

import (
	"net/http"
	"strings"
	"testing"
)

// Every signed-in page has the phone's Menu button: closed, controlling
// the element that holds the navigation, wired by a static script (the
// CSP refuses inline script). The login page has neither.
func TestMenuButtonOnEveryConsolePage(t *testing.T) {
	in := startWarden(t, nil)
	b := newBrowser(t, in.URL)
	if login := b.get("/login"); login.Doc.Find(`[data-testid="menu-button"]`).Length() != 0 || login.Doc.Find(`script[src="/static/menu.js"]`).Length() != 0 {
		t.Error("the login page has a Menu button or its script")
	}
	b.loginDev("erin")
	for _, path := range []string{"/", "/keys", "/traces"} {
		p := b.get(path)
		btn := p.Doc.Find(`header button[data-testid="menu-button"]`)
		if btn.Length() != 1 {
			t.Fatalf("%s: %d Menu buttons in the header, want 1", path, btn.Length())
		}
		if got, _ := btn.Attr("aria-expanded"); got != "false" {
			t.Errorf("%s: Menu button aria-expanded=%q, want false", path, got)
		}
		id, _ := btn.Attr("aria-controls")
		if id == "" || p.Doc.Find("#"+id+" nav.nav a").Length() == 0 {
			t.Errorf("%s: the Menu button controls %q, which holds no navigation", path, id)
		}
		if p.Doc.Find(`script[src="/static/menu.js"]`).Length() != 1 {
			t.Errorf("%s: the page does not load /static/menu.js", path)
		}
		if p.Doc.Find(`script:not([src])`).Length() != 0 {
			t.Errorf("%s: inline script, which the CSP refuses", path)
		}
	}
	js := b.get("/static/menu.js")
	if js.Status != http.StatusOK || !strings.Contains(js.Header.Get("Content-Type"), "javascript") || !strings.Contains(js.Body, "aria-expanded") {
		t.Errorf("GET /static/menu.js = %d %s", js.Status, js.Header.Get("Content-Type"))
	}
	css := b.get("/static/app.css")
	if !strings.Contains(css.Body, "(scripting: enabled)") {
		t.Error("app.css hides the menu without asking whether scripts run: without JavaScript the navigation would be unreachable")
	}
}
