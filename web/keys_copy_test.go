package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The one-time key secret has a Copy button wired by a static script (the
// CSP forbids inline script), and the keys list keeps Revoke in a column
// of its own.
func TestKeySecretCopyButtonAndRevokeColumn(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("erin")
	res := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {"copy-bot"}, "scopes": {"tool:lookup_order"}, "rate_per_min": {"60"}, "burst": {"5"},
	}), nil)
	if res.Status != http.StatusOK || !strings.HasSuffix(res.URL.Path, "/created") {
		t.Fatalf("create = %d at %s", res.Status, res.URL)
	}
	btn := res.Doc.Find(`button[data-testid="copy-key-secret"]`)
	if target, _ := btn.Attr("data-copy"); btn.Length() != 1 || target == "" || res.Doc.Find("#"+target).Text() != text(res, "new-key-secret") {
		t.Fatalf("no Copy button bound to the secret (button %d, target %q)", btn.Length(), target)
	}
	if res.Doc.Find(`script[src="/static/copy.js"]`).Length() == 0 {
		t.Error("the page does not load /static/copy.js")
	}
	if res.Doc.Find(`script:not([src])`).Length() != 0 {
		t.Error("the page has inline script, which the CSP refuses")
	}
	if js := b.get("/static/copy.js"); js.Status != http.StatusOK || !strings.Contains(js.Body, "clipboard.writeText") {
		t.Errorf("GET /static/copy.js = %d", js.Status)
	}

	list := b.get("/keys")
	revoke := list.Doc.Find(`[data-testid="keys-table"] tbody td.row-actions a[href$="/revoke"]`)
	if revoke.Length() == 0 {
		t.Error("Revoke is not in its own actions column")
	}
	if list.Doc.Find(`[data-testid="keys-table"] tbody td.state-cell a`).Length() != 0 {
		t.Error("the state column still holds a button")
	}
}
