package main

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserSessionsEndOnTheServer: a session cookie copied before
// sign-out opens nothing after it, and an admin's revocation sends the
// user's next request to the sign-in page, in a real browser.
func TestBrowserSessionsEndOnTheServer(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")

	signIn(t, ctx, p, "alice")
	jar, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	copied := ""
	for _, c := range jar.Cookies {
		if c.Name == "warden_session" {
			copied = c.Value
			if !c.HTTPOnly {
				t.Error("the session cookie is readable by scripts")
			}
		}
	}
	if copied == "" {
		t.Fatalf("no warden_session cookie after sign-in: %v", jar.Cookies)
	}

	// Sign out (through the development provider's end-session endpoint),
	// then put the copied cookie back.
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("signed-out"))); err != nil {
		t.Fatalf("sign out: %v\nwarden logs:\n%s", err, p.logs)
	}
	httpOnly := true
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: "warden_session", Value: copied, URL: p.URL + "/", Path: "/", HTTPOnly: &httpOnly}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/approvals"), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("replayed cookie: %v\nwarden logs:\n%s", err, p.logs)
	}
	if loc := location(t, ctx); !strings.Contains(loc, "/login") {
		t.Errorf("the replayed cookie opened %s, want the sign-in page", loc)
	}

	// Alice signs in again; erin, in a browser context of her own,
	// revokes all of alice's sessions.
	signIn(t, ctx, p, "alice")
	admin, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	signIn(t, admin, p, "erin")
	href, err := chromedp.Run(admin, chromedp.Evaluate[string](`(async () => {
		const page = await fetch("/sessions").then(r => r.text());
		const doc = new DOMParser().parseFromString(page, "text/html");
		const a = Array.from(doc.querySelectorAll('[data-testid^="session-who-"]')).find(a => a.textContent.trim() === "Alice Approver");
		return a ? a.getAttribute("href") : "";
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || href == "" {
		t.Fatalf("alice's session is not listed on /sessions (%v)", err)
	}
	err = chromedp.Do(admin,
		chromedp.Navigate(p.URL+href),
		chromedp.Click(byTestID("sessions-revoke-all")),
		chromedp.WaitVisible(byTestID("confirm")),
		chromedp.Click(byTestID("confirm-submit")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("revoke alice's sessions: %v\nwarden logs:\n%s", err, p.logs)
	}
	screenshot(admin, "sessions-revoked")
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/approvals"), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("alice after revocation: %v\nwarden logs:\n%s", err, p.logs)
	}
	if loc := location(t, ctx); !strings.Contains(loc, "/login") {
		t.Errorf("after revocation alice's next request landed on %s, want the sign-in page", loc)
	}
}
