package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/web/browsertest"
)

func newBrowserContext(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Context(t, chromedp.WindowSize(1280, 900))
}

// css selects the first element matching a CSS selector.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

func byTestID(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

func textOf(t *testing.T, ctx context.Context, sel chromedp.CSS) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("read text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// screenshot saves the page when WARDEN_SCREENSHOTS names a folder.
func screenshot(ctx context.Context, name string) {
	dir := os.Getenv("WARDEN_SCREENSHOTS")
	if dir == "" {
		return
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
}

// signIn clicks through the login page and the development provider's
// picker as a person would.
func signIn(t *testing.T, ctx context.Context, p *process, user string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/"),
		chromedp.WaitVisible(byTestID("login-button")),
		chromedp.Click(byTestID("login-button")),
		chromedp.WaitVisible(byTestID("devidp-user-"+user)),
		chromedp.Click(byTestID("devidp-user-"+user)),
		chromedp.WaitVisible(byTestID("whoami")),
	)
	if err != nil {
		t.Fatalf("sign in as %s: %v\nwarden logs:\n%s", user, err, p.logs)
	}
}

// TestBrowserLoginJourney is the first thing a newcomer does: open Warden,
// get sent to sign in, pick alice in the development provider, see who
// they are, sign out.
func TestBrowserLoginJourney(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")

	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("open /: %v\nwarden logs:\n%s", err, p.logs)
	}
	if loc := location(t, ctx); !strings.Contains(loc, "/login") {
		t.Errorf("opening / landed on %s, want the login page", loc)
	}
	if banner := textOf(t, ctx, byTestID("dev-banner")); !strings.Contains(banner, "Development mode") {
		t.Errorf("banner = %q, want the development-mode banner", banner)
	}
	screenshot(ctx, "login")

	signIn(t, ctx, p, "alice")
	name, roles, tenants := textOf(t, ctx, byTestID("whoami-name")), textOf(t, ctx, byTestID("whoami-roles")), textOf(t, ctx, byTestID("whoami-tenants"))
	if name != "Alice Approver" || roles != "approver" || tenants != "acme" {
		t.Errorf("home shows %q / %q / %q, want Alice Approver / approver / acme", name, roles, tenants)
	}
	screenshot(ctx, "home")

	err := chromedp.Do(ctx,
		chromedp.Click(byTestID("logout")),
		chromedp.WaitVisible(byTestID("login-button")),
	)
	if err != nil {
		t.Fatalf("sign out: %v\nwarden logs:\n%s", err, p.logs)
	}
	if loc := location(t, ctx); !strings.Contains(loc, "/login") {
		t.Errorf("after sign-out at %s, want the login page", loc)
	}
	// Signed out means signed out: the home page sends us to sign in again.
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("home after sign-out: %v", err)
	}
	p.stop(t)
}

// TestBrowserForbiddenPage: a user without the role gets a proper 403 page
// in the browser, and the navigation never offered the link.
func TestBrowserForbiddenPage(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "alice")
	if nav := textOf(t, ctx, css("nav.nav")); strings.Contains(nav, "Audit") {
		t.Errorf("approver's navigation offers the audit trail: %q", nav)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/audit"), chromedp.WaitVisible(byTestID("error-page"))); err != nil {
		t.Fatalf("open /audit: %v", err)
	}
	if msg := textOf(t, ctx, byTestID("error-page")); !strings.Contains(msg, "403") || !strings.Contains(msg, "auditor") {
		t.Errorf("403 page says %q, want the status and the role needed", msg)
	}
	p.stop(t)
}

// TestBrowserKeyJourneyTrace: erin creates a key and sees it once; an agent
// runs a journey with it over HTTP; the trace shows up redacted.
func TestBrowserKeyJourneyTrace(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "erin")
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/keys/new"),
		chromedp.WaitVisible(byTestID("key-create-form")),
		chromedp.SendKeys(css("#name"), "browser test agent"),
		chromedp.Click(css(`input[value="skill:order_status"]`)),
		chromedp.Click(css(`input[value="tool:lookup_order"]`)),
		chromedp.Click(byTestID("key-create")),
		chromedp.WaitVisible(byTestID("new-key-secret")),
	)
	if err != nil {
		t.Fatalf("create key: %v\nwarden logs:\n%s", err, p.logs)
	}
	secret := textOf(t, ctx, byTestID("new-key-secret"))
	if !strings.HasPrefix(secret, "wk_") {
		t.Fatalf("shown secret = %q", secret)
	}
	screenshot(ctx, "key-created")
	// The list never shows it again.
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/keys"), chromedp.WaitVisible(byTestID("keys-table"))); err != nil {
		t.Fatal(err)
	}
	if html, _ := chromedp.Run(ctx, chromedp.OuterHTML(css("body"))); strings.Contains(html, secret) {
		t.Fatal("the keys list shows the secret")
	}

	const email = "jane.roe@example.org"
	body := `{"input":"Where is my order ORD-1003? Write to ` + email + ` or call +44 20 7946 0958."}`
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/journeys", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ ID, Status string }
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || out.Status != "completed" {
		t.Fatalf("journey = %d %+v\n%s", resp.StatusCode, out, p.logs)
	}

	err = chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/traces"),
		chromedp.WaitVisible(byTestID("trace-"+out.ID)),
		chromedp.Click(css(`[data-testid="trace-`+out.ID+`"] a`)),
		chromedp.WaitVisible(byTestID("trace-input")),
	)
	if err != nil {
		t.Fatalf("open trace: %v", err)
	}
	screenshot(ctx, "trace")
	input := textOf(t, ctx, byTestID("trace-input"))
	if strings.Contains(input, email) || strings.Contains(input, "7946 0958") || !strings.Contains(input, "[email:") {
		t.Errorf("trace input = %q, want the e-mail and phone redacted", input)
	}
	if html, _ := chromedp.Run(ctx, chromedp.OuterHTML(css("body"))); strings.Contains(html, email) {
		t.Error("the trace page shows the e-mail address")
	}
	p.stop(t)
}
