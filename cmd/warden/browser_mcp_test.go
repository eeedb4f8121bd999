package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/tools/sim/mcpshop"
)

// TestBrowserMCPServersOnAPhone: on a 390 px wide phone, erin (admin)
// opens MCP servers from the menu, adds the example shop (a bad URL
// first: refused, input kept), discovers its tools and reads them; carol
// (on-call) opens Kill switches from the menu, which lists the shop and
// its tools. No page is wider than the phone.
func TestBrowserMCPServersOnAPhone(t *testing.T) {
	shop := httptest.NewServer(mcpshop.New().Handler())
	t.Cleanup(shop.Close)
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	// Signed in as on every other browser test, then on a phone's width.
	phone := func(user string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.EmulateReset()); err != nil {
			t.Fatal(err)
		}
		signIn(t, ctx, p, user)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(byTestID("whoami"))); err != nil {
			t.Fatal(err)
		}
	}
	phone("erin")

	fitsThePhone := func(page string) {
		t.Helper()
		w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`))
		if err != nil || w > 390 {
			t.Errorf("%s is %d px wide (%v), want at most 390", page, w, err)
		}
	}
	err := chromedp.Do(ctx,
		chromedp.Click(byTestID("menu-button")),
		chromedp.Click(css(`nav.nav a[href="/mcp-servers"]`)),
		chromedp.WaitVisible(byTestID("mcp-servers-empty")),
	)
	if err != nil {
		t.Fatalf("open MCP servers from the navigation: %v\nwarden logs:\n%s", err, p.logs)
	}
	fitsThePhone("MCP servers, empty")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(`#name`, "shop"),
		chromedp.SendKeys(`#url`, "not a url"),
		chromedp.Click(byTestID("mcp-server-submit")),
		chromedp.WaitVisible(`#url-error`),
	)
	if err != nil {
		t.Fatalf("add a server with a bad URL: %v", err)
	}
	if name, _ := chromedp.Run(ctx, chromedp.Value(`#name`)); name != "shop" {
		t.Errorf("after a refused form the name reads %q, want it kept", name)
	}
	err = chromedp.Do(ctx,
		chromedp.SetValue(`#url`, shop.URL),
		chromedp.Click(byTestID("mcp-server-submit")),
		chromedp.WaitVisible(byTestID("mcp-discover-shop")),
		chromedp.Click(byTestID("mcp-discover-shop")),
		chromedp.WaitVisible(byTestID("mcp-tool-shop-issue_refund")),
	)
	if err != nil {
		t.Fatalf("add and discover the shop: %v\nwarden logs:\n%s", err, p.logs)
	}
	if got := textOf(t, ctx, byTestID("mcp-tool-shop-issue_refund")); !strings.Contains(got, "issue_refund") {
		t.Errorf("the shop's refund tool reads %q", got)
	}
	fitsThePhone("MCP servers with the shop's tools")
	screenshot(ctx, "mcp-servers-phone")

	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("erin signs out: %v", err)
	}
	phone("carol")
	err = chromedp.Do(ctx,
		chromedp.Click(byTestID("menu-button")),
		chromedp.Click(css(`nav.nav a[href="/switches"]`)),
		chromedp.WaitVisible(byTestID("switch-mcp-server-shop")),
		chromedp.WaitVisible(byTestID("switch-mcp-tool-shop__issue_refund")),
	)
	if err != nil {
		t.Fatalf("carol opens Kill switches: %v\nwarden logs:\n%s", err, p.logs)
	}
	fitsThePhone("Kill switches")
	screenshot(ctx, "switches-phone")
}
