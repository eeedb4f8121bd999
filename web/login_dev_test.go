package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

func TestDevLoginShowsWhoYouAre(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)

	// Anonymous: sent to the login page, which offers the dev provider.
	login := b.get("/")
	if login.URL.Path != "/login" || login.Status != http.StatusOK {
		t.Fatalf("GET / anonymous ended at %s (%d), want /login", login.URL, login.Status)
	}
	if login.Doc.Find(`[data-testid="login-button"]`).Length() != 1 {
		t.Fatalf("login page has no sign-in button:\n%s", login.Body)
	}
	if login.Doc.Find(`[data-testid="dev-banner"]`).Length() != 1 {
		t.Error("login page lacks the development-mode banner")
	}

	home := b.loginDev("alice")
	if home.Status != http.StatusOK || home.URL.Path != "/" {
		t.Fatalf("after login at %s (%d), want / 200:\n%s", home.URL, home.Status, home.Body)
	}
	if got := text(home, "whoami-name"); got != "Alice Approver" {
		t.Errorf("whoami name = %q, want Alice Approver", got)
	}
	if got := text(home, "whoami-roles"); got != "approver" {
		t.Errorf("whoami roles = %q, want approver", got)
	}
	if got := text(home, "whoami-tenants"); got != "acme" {
		t.Errorf("whoami tenants = %q, want acme", got)
	}
	if got := text(home, "count-tenants"); got != "1" {
		t.Errorf("tenant count = %q, want 1", got)
	}
	if home.Doc.Find(`[data-testid="dev-banner"]`).Length() != 1 {
		t.Error("home page lacks the development-mode banner")
	}

	ev := lastAudit(t, in.DB)
	if ev.Verb != "auth.login" || ev.Actor.Type != "principal" || ev.Actor.ID == "" {
		t.Errorf("last audit event = %s by %s/%s, want auth.login by a principal", ev.Verb, ev.Actor.Type, ev.Actor.ID)
	}
	p, err := principals.ByID(t.Context(), in.DB, ev.Actor.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.Issuer, "/dev-idp") || p.Subject == "" {
		t.Errorf("stored principal = %s / %s, want the dev-idp issuer and a subject", p.Issuer, p.Subject)
	}
	// The count on the page is live: the login itself is one event.
	if got, want := text(home, "count-audit"), "1"; got != want {
		t.Errorf("audit count on home = %q, want %q", got, want)
	}
}

func TestLogoutClearsSessionAndIsAudited(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	tok := b.csrf()

	out := b.continueSignOut(b.post("/auth/logout", url.Values{"_csrf": {tok}}, nil))
	if out.URL.Path != "/login" || out.Status != http.StatusOK || text(out, "signed-out") == "" {
		t.Fatalf("logout ended at %s (%d), want /login saying so", out.URL, out.Status)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "auth.logout" {
		t.Errorf("last audit event = %s, want auth.logout", ev.Verb)
	}
	if again := b.get("/status"); again.URL.Path != "/login" {
		t.Errorf("after logout GET /status ended at %s, want /login", again.URL)
	}
}

func TestRoleChecks(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	paths := []string{"/", "/status", "/audit", "/tenants"}
	tests := []struct {
		user string
		want []int // status per path above
	}{
		{"alice", []int{200, 403, 403, 403}},   // approver
		{"carol", []int{200, 200, 403, 403}},   // on-call
		{"dave", []int{200, 403, 200, 403}},    // auditor
		{"erin", []int{200, 200, 200, 200}},    // admin
		{"mallory", []int{200, 403, 403, 403}}, // no groups, no roles
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			b := newBrowser(t, in.URL)
			b.loginDev(tt.user)
			for i, path := range paths {
				p := b.get(path)
				if p.Status != tt.want[i] {
					t.Errorf("%s GET %s = %d, want %d", tt.user, path, p.Status, tt.want[i])
				}
				if p.Status == http.StatusForbidden && p.Doc.Find(`[data-testid="error-page"]`).Length() != 1 {
					t.Errorf("%s GET %s: 403 without the error page", tt.user, path)
				}
			}
			// The navigation offers exactly the pages the user may open.
			home := b.get("/")
			for i, path := range paths {
				offered := home.Doc.Find(`nav a[href="`+path+`"]`).Length() == 1
				if offered != (tt.want[i] == 200) {
					t.Errorf("%s: nav offers %s = %v, want %v", tt.user, path, offered, tt.want[i] == 200)
				}
			}
		})
	}
}

func TestNoRolesUserIsToldWhy(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	home := b.loginDev("mallory")
	if home.Doc.Find(`[data-testid="no-roles"]`).Length() != 1 {
		t.Errorf("home of a user without roles does not explain it:\n%s", home.Body)
	}
	// Someone Warden gave no role learns nothing about the system, not
	// even how many tenants or events it holds.
	if n := home.Doc.Find(`[data-testid="count-tenants"], [data-testid="count-audit"]`).Length(); n != 0 {
		t.Errorf("user without a role is shown %d system-wide counts, want none", n)
	}
}

func TestCSRFRefusesPostWithoutToken(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("erin")
	tok := b.csrf()
	before := auditCount(t, in.DB)

	tests := []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no token", url.Values{}, nil},
		{"wrong token", url.Values{"_csrf": {"forged"}}, nil},
		{"wrong header", url.Values{}, map[string]string{"X-CSRF-Token": "forged"}},
		{"cross-site fetch", url.Values{"_csrf": {tok}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
	}
	for _, tt := range tests {
		p := b.post("/audit/verify", tt.form, tt.header)
		if p.Status != http.StatusForbidden {
			t.Errorf("%s: POST /audit/verify = %d, want 403", tt.name, p.Status)
		}
		if got := auditCount(t, in.DB); got != before {
			t.Fatalf("%s: audit count %d after refused POST, want %d (nothing changed)", tt.name, got, before)
		}
		out := b.post("/auth/logout", tt.form, tt.header)
		if out.Status != http.StatusForbidden {
			t.Errorf("%s: POST /auth/logout = %d, want 403", tt.name, out.Status)
		}
	}
	if still := b.get("/tenants"); still.Status != http.StatusOK {
		t.Fatalf("refused logout signed the user out: GET /tenants = %d", still.Status)
	}

	// The genuine form field and the header both work.
	if p := b.post("/audit/verify", url.Values{"_csrf": {tok}}, nil); p.Status != http.StatusOK || text(p, "verify-result") == "" {
		t.Fatalf("POST /audit/verify with token = %d", p.Status)
	}
	if p := b.post("/audit/verify", url.Values{}, map[string]string{"X-CSRF-Token": tok}); p.Status != http.StatusOK {
		t.Fatalf("POST /audit/verify with header token = %d", p.Status)
	}
	if got := auditCount(t, in.DB); got != before+2 {
		t.Errorf("audit count = %d, want %d after two verifications", got, before+2)
	}
}

func TestAuditPageVerifiesChain(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("dave")
	p := b.post("/audit/verify", url.Values{"_csrf": {b.csrf()}}, nil)
	if got := text(p, "verify-result"); !strings.HasPrefix(got, "Chain intact: 1 events verified") {
		t.Errorf("verify result = %q, want chain intact with the login event", got)
	}
	if p.Doc.Find(`[data-testid="audit-table"] tbody tr`).Length() != 2 {
		t.Errorf("audit table rows = %d, want 2 (login, verify)", p.Doc.Find(`[data-testid="audit-table"] tbody tr`).Length())
	}

	// Tamper with the stored chain behind Warden's back.
	raw := in.DB.Read()
	drop := `DROP TRIGGER audit_events_no_update`
	if in.DB.Dialect() == store.Postgres {
		drop += ` ON audit_events`
	}
	if _, err := raw.Exec(drop); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE audit_events SET verb = 'auth.logout' WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	p = b.post("/audit/verify", url.Values{"_csrf": {b.csrf()}}, nil)
	if got := text(p, "verify-result"); !strings.Contains(got, "Chain broken at seq 1") {
		t.Errorf("verify result after tampering = %q, want broken at seq 1", got)
	}
}

func TestReplayedCallbackIsRefused(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)

	// Capture the callback URL the provider sends the browser to.
	callback := b.recordCallback()
	b.loginDev("bob")
	if *callback == "" {
		t.Fatal("never saw the callback")
	}
	// Same browser, same callback again: the state was used up, so the
	// callback matches no sign-in in progress. Anyone can send such a
	// request, so it is refused without writing the audit trail.
	before := auditCount(t, in.DB)
	p := b.get(*callback)
	if p.Status != http.StatusBadRequest || text(p, "login-error") == "" {
		t.Errorf("replayed callback = %d, want 400 with an error", p.Status)
	}
	if got := auditCount(t, in.DB); got != before {
		t.Errorf("replayed callback wrote %d audit events, want none", got-before)
	}

	// Start a new login so the session holds a fresh state, then present
	// the old, already redeemed code with that state: the provider refuses
	// to redeem it twice.
	nr := b.noRedirect()
	start := nr.get("/auth/login")
	authURL, _ := url.Parse(start.Header.Get("Location"))
	state := authURL.Query().Get("state")
	old, _ := url.Parse(*callback)
	q := old.Query()
	q.Set("state", state)
	old.RawQuery = q.Encode()
	p = b.get(old.String())
	if p.Status != http.StatusUnauthorized {
		t.Errorf("reused code = %d, want 401", p.Status)
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "auth.login_failed" || ev.Subject.ID != "code_exchange_failed" {
		t.Errorf("last audit = %s %s, want auth.login_failed code_exchange_failed", ev.Verb, ev.Subject.ID)
	}
	// Refused callbacks neither sign anyone in nor sign bob out.
	if got := b.get("/"); text(got, "whoami-name") != "Bob Approver" {
		t.Errorf("after refused callbacks the home page shows %q, want Bob Approver", text(got, "whoami-name"))
	}
}

func TestLogsCarryNoCodesOrTokens(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	var callback *url.URL
	b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/auth/callback" {
			callback = req.URL
		}
		return nil
	}
	b.loginDev("erin")
	b.get("/audit")
	logs := in.Logs.String()
	u, _ := url.Parse(in.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if strings.Contains(logs, c.Value) {
			t.Errorf("logs contain the value of cookie %s", c.Name)
		}
	}
	for _, secret := range []string{callback.Query().Get("code"), callback.Query().Get("state")} {
		if secret == "" || strings.Contains(logs, secret) {
			t.Errorf("logs contain an authorization code or state %q", secret)
		}
	}
	if !strings.Contains(logs, "request_id=") {
		t.Error("request log lines carry no request id")
	}
}
