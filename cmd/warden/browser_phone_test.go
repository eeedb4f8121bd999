package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
)

// phoneWidth is the width of the phone the console is checked on (an
// iPhone 12 to 15 held upright), in CSS pixels.
const phoneWidth = 390

// TestBrowserPhoneEveryPage: each demo role (approver, on-call, auditor,
// admin) signs in and, on a 390 px wide phone, finds the navigation behind
// the Menu button: closed, no link of it shows; opened (by a click, and by
// the keyboard), every link shows whole and is the element under its own
// centre, so a thumb reaches it. Every page the navigation offers, and
// pages behind each kind of link on those pages (approvals, traces, a
// key, a tool's form...), are no wider than the phone, no stat box cuts
// its value off (the approval's amount), and every cell of a table laid
// out for phones (.table-stack) lies in sight. At 1366 px the navigation shows
// without the Menu button, as before.
func TestBrowserPhoneEveryPage(t *testing.T) {
	p := startProcess(t, "")
	// The demo's journeys run at start-up: wait for the approvals they
	// leave, so the approver's queue and the traces have rows to follow.
	ctx := newBrowserContext(t)
	signIn(t, ctx, p, "alice")
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/approvals"), chromedp.WaitVisible(`main a[href^="/approvals/act_"]`)); err != nil {
		t.Fatalf("alice's queue shows no approval: %v\nwarden logs:\n%s", err, p.logs)
	}
	for _, tc := range []struct {
		user string
		want []string // page kinds the walk must have reached
	}{
		{"alice", []string{"/approvals/*"}},
		{"carol", []string{"/traces/*", "/approvals/*", "/switches", "/runbooks/*", "/releases"}},
		{"dave", []string{"/traces/*", "/approvals/*", "/audit"}},
		{"erin", []string{"/traces/*", "/approvals/*", "/keys", "/keys/*", "/tools", "/budgets", "/sessions", "/releases", "/models", "/tenants/acme"}},
	} {
		t.Run(tc.user, func(t *testing.T) {
			ctx := newBrowserContext(t)
			signIn(t, ctx, p, tc.user)

			// The desktop, unchanged: the navigation in the top bar, no
			// Menu button.
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900), chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(`nav.nav`)); err != nil {
				t.Fatalf("desktop home: %v", err)
			}
			if vis := visible(t, ctx, byTestID("menu-button")); vis {
				t.Errorf("at 1366 px the Menu button shows; want the navigation alone")
			}
			// A wide screen shows every link of the navigation: a long one
			// (the admin's) wraps to a second row instead of scrolling.
			inSight, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`(() => {
				const nav = document.querySelector('nav.nav').getBoundingClientRect(), links = Array.from(document.querySelectorAll('nav.nav a'));
				return [links.filter(a => { const r = a.getBoundingClientRect(); return r.left >= nav.left && r.right <= nav.right; }).length, links.length];
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			if inSight[0] != inSight[1] {
				t.Errorf("%s at 1366 px: %d of %d navigation links in sight; want all", tc.user, inSight[0], inSight[1])
			}
			desk := navLinks(t, ctx)
			if len(desk) == 0 || !desk[0].Shown {
				t.Errorf("at 1366 px the navigation does not show: %+v", desk)
			}
			fits(t, ctx, "home at 1366 px", 1366)
			attachScreenshot(t, ctx, tc.user+"-desktop")

			// The phone.
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 844), chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(byTestID("whoami"))); err != nil {
				t.Fatalf("phone home: %v", err)
			}
			if !visible(t, ctx, byTestID("menu-button")) {
				t.Fatalf("at %d px no Menu button shows", phoneWidth)
			}
			closed := navLinks(t, ctx)
			for _, l := range closed {
				if l.Shown {
					t.Errorf("menu closed, yet %q shows", l.Label)
				}
			}
			if got := attr(t, ctx, byTestID("menu-button"), "aria-expanded"); got != "false" {
				t.Errorf("closed menu's button has aria-expanded=%q, want false", got)
			}
			attachScreenshot(t, ctx, tc.user+"-phone-closed")
			if err := chromedp.Do(ctx, chromedp.Click(byTestID("menu-button")), chromedp.WaitVisible(`nav.nav a`)); err != nil {
				t.Fatalf("open the menu: %v", err)
			}
			if got := attr(t, ctx, byTestID("menu-button"), "aria-expanded"); got != "true" {
				t.Errorf("open menu's button has aria-expanded=%q, want true", got)
			}
			open := navLinks(t, ctx)
			if len(open) != len(desk) {
				t.Errorf("the phone's menu has %d links, the desktop's navigation %d", len(open), len(desk))
			}
			for _, l := range open {
				if !l.Shown || !l.Reachable {
					t.Errorf("menu open: %q shown=%v, under its centre=%v (%+v)", l.Label, l.Shown, l.Reachable, l)
				}
			}
			fits(t, ctx, "home with the menu open", phoneWidth)
			attachScreenshot(t, ctx, tc.user+"-phone-menu")

			// Escape closes it and gives the focus back to the button;
			// Enter on the button opens it again.
			if err := chromedp.Do(ctx, chromedp.KeyEvent("\x1b")); err != nil {
				t.Fatal(err)
			}
			if got := attr(t, ctx, byTestID("menu-button"), "aria-expanded"); got != "false" {
				t.Errorf("after Escape aria-expanded=%q, want false", got)
			}
			if focused, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.dataset.testid || document.activeElement.tagName`)); focused != "menu-button" {
				t.Errorf("after Escape the focus is on %q, want the Menu button", focused)
			}
			if err := chromedp.Do(ctx, chromedp.Focus(byTestID("menu-button")), chromedp.KeyEvent("\r"), chromedp.WaitVisible(`nav.nav a`)); err != nil {
				t.Fatalf("open the menu by the keyboard: %v", err)
			}
			if got := attr(t, ctx, byTestID("menu-button"), "aria-expanded"); got != "true" {
				t.Errorf("after Enter on the button aria-expanded=%q, want true", got)
			}
			// A link of the menu is clicked as a person would: the last
			// one, furthest down.
			last := open[len(open)-1]
			if err := chromedp.Do(ctx, chromedp.Click(css(`nav.nav a[href="`+last.Href+`"]`))); err != nil {
				t.Fatalf("click %q in the menu: %v", last.Label, err)
			}
			landed := wait.ForEvery(5*time.Second, 50*time.Millisecond, func() bool {
				loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === 'complete' ? location.pathname : ''`))
				return err == nil && loc == last.Href
			})
			if !landed {
				t.Fatalf("clicking %q in the menu did not open %s; at %s", last.Label, last.Href, location(t, ctx))
			}
			if vis := visible(t, ctx, css(`nav.nav a`)); vis {
				t.Errorf("the menu stays open on the page its link opened")
			}

			// Every page of the navigation, and the pages they link to.
			// Up to three pages of a kind with an id (three traces, three
			// approvals: their contents differ), one of every other.
			seen, opened := map[string]int{}, map[string]bool{}
			var queue []string
			add := func(href string) {
				k := pageKind(href)
				if k == "" || opened[href] || seen[k] >= 1 && !strings.Contains(k, "*") || seen[k] >= 3 {
					return
				}
				seen[k]++
				opened[href] = true
				queue = append(queue, href)
			}
			for _, l := range open {
				add(l.Href)
			}
			nav := len(queue)
			for i := 0; i < len(queue); i++ {
				href := queue[i]
				if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+href), chromedp.WaitReady(`main`)); err != nil {
					t.Errorf("open %s: %v", href, err)
					continue
				}
				fits(t, ctx, href, phoneWidth)
				stackedCellsInSight(t, ctx, href)
				screenshot(ctx, "phone-"+tc.user+strings.NewReplacer("/", "-", "*", "x").Replace(pageKind(href)))
				if i < nav { // one level deep: the navigation's pages' links
					links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('main a[href]')).map(a => a.getAttribute('href'))`))
					if err != nil {
						t.Fatal(err)
					}
					for _, l := range links {
						add(l)
					}
				}
			}
			for _, k := range tc.want {
				if seen[k] == 0 {
					t.Errorf("the walk did not reach a %s page; it saw %v", k, sortedKeys(seen))
				}
			}
			t.Logf("%s: %d pages at %d px", tc.user, len(queue), phoneWidth)

			// Without JavaScript there is no Menu button: the navigation
			// lies open, wrapped, every link in sight.
			if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(`nav.nav`)); err != nil {
				t.Fatalf("home without JavaScript: %v", err)
			}
			if visible(t, ctx, byTestID("menu-button")) {
				t.Errorf("without JavaScript the Menu button shows, and would do nothing")
			}
			for _, l := range navLinks(t, ctx) {
				if !l.Shown || !l.Reachable {
					t.Errorf("without JavaScript: %q shown=%v, under its centre=%v (%+v)", l.Label, l.Shown, l.Reachable, l)
				}
			}
			fits(t, ctx, "home without JavaScript", phoneWidth)
			attachScreenshot(t, ctx, tc.user+"-phone-nojs")
		})
	}
}

type navLink struct {
	Label, Href      string
	Shown, Reachable bool
	Left, Right      float64
}

// navLinks reads the navigation's links: shown when laid out with a size,
// inside the viewport's width and not hidden; reachable when the link is
// what a tap on its centre hits.
func navLinks(t *testing.T, ctx context.Context) []navLink {
	t.Helper()
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]navLink](`Array.from(document.querySelectorAll('nav.nav a')).map(a => {
		const r = a.getBoundingClientRect();
		const shown = r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= window.innerWidth && getComputedStyle(a).visibility !== 'hidden';
		let hit = null;
		if (shown) {
			a.scrollIntoView({block: 'nearest'});
			const r2 = a.getBoundingClientRect();
			hit = document.elementFromPoint(r2.left + r2.width / 2, r2.top + r2.height / 2);
		}
		return {Label: a.textContent.trim(), Href: a.getAttribute('href'), Shown: shown, Reachable: !!hit && a.contains(hit), Left: r.left, Right: r.right};
	})`))
	if err != nil {
		t.Fatalf("read the navigation: %v", err)
	}
	return links
}

func visible(t *testing.T, ctx context.Context, sel chromedp.CSS) bool {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; })()`, string(sel))))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func attr(t *testing.T, ctx context.Context, sel chromedp.CSS, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? (e.getAttribute(%q) || "") : "(none)"; })()`, string(sel), name)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fits fails when the page is wider than the viewport (it scrolls
// sideways) or a stat box cuts its value off.
func fits(t *testing.T, ctx context.Context, where string, width int) {
	t.Helper()
	type measure struct {
		Scroll, Client int
		Wide           []string
		Clipped        []string
	}
	m, err := chromedp.Run(ctx, chromedp.Evaluate[measure](`(() => {
		const de = document.documentElement, vw = de.clientWidth;
		const wide = [];
		if (de.scrollWidth > vw) {
			// The outermost elements that stick out, to say what to fix.
			for (const e of document.querySelectorAll('body *')) {
				const r = e.getBoundingClientRect();
				if (r.right > vw + 1 && r.width > 0 && !e.closest('.table-wrap') && !(e.parentElement && e.parentElement.getBoundingClientRect().right > vw + 1)) {
					const name = n => n.tagName.toLowerCase() + (n.className ? '.' + String(n.className).trim().replace(/\s+/g, '.') : '') + (n.dataset.testid ? '[' + n.dataset.testid + ']' : '');
					wide.push(name(e.parentElement) + ' > ' + name(e) + ' right=' + Math.round(r.right));
					if (wide.length >= 6) break;
				}
			}
		}
		const clipped = Array.from(document.querySelectorAll('.stat-value, .stat-label, .action-summary, h1')).filter(e => e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.trim().slice(0, 40) + ' ' + e.scrollWidth + '>' + e.clientWidth);
		return {Scroll: de.scrollWidth, Client: vw, Wide: wide, Clipped: clipped};
	})()`))
	if err != nil {
		t.Fatalf("measure %s: %v", where, err)
	}
	if m.Scroll > m.Client || m.Client > width {
		t.Errorf("%s is %d px wide in a %d px viewport (want at most %d): %v", where, m.Scroll, m.Client, width, m.Wide)
	}
	if len(m.Clipped) > 0 {
		t.Errorf("%s cuts off %v", where, m.Clipped)
	}
}

var (
	download     = regexp.MustCompile(`\.(csv|jsonl|json)$`)
	fixedSegment = regexp.MustCompile(`^[a-z-]{1,12}$`) // "new", "edit", "revoke", "acme"; not an id
)

// pageKind names the console page an href opens, one name for pages of
// one kind: /keys/k_01H… and /keys/k_02J… are both "/keys/*", while
// /keys/new stays itself. Empty for what is no page to look at (other
// origins, downloads, sign-in, anchors).
func pageKind(href string) string {
	u, err := url.Parse(href)
	if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(u.Path, "/") {
		return ""
	}
	path := u.Path
	if strings.HasPrefix(path, "/auth/") || strings.HasPrefix(path, "/static/") || strings.HasPrefix(path, "/login") || download.MatchString(path) {
		return ""
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if i > 0 && !fixedSegment.MatchString(s) {
			segs[i] = "*"
		}
	}
	return "/" + strings.Join(segs, "/")
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestBrowserPhoneTablesStack: on a 390 px phone the Changes queue (a
// pending change of erin's), the Labelling queue (every journey sampled),
// the Releases page's route accuracy per skill and wrong routes, the
// Traces and Actions lists, the Notifications page's channels and
// routes (one of each added by erin) and alice's approvals queue (the demo's
// pending actions; Take works from it) read one row at a time: every cell of their tables lies inside the screen,
// whole, after its column's name (Why, Expires, Routed to, Started,
// False positives...), with no sideways scrolling inside the card. The
// row's link is reached with the keyboard and opens the change, or the
// journey's label form. With WARDEN_TEST_POSTGRES set, the process keeps
// its data in PostgreSQL.
func TestBrowserPhoneTablesStack(t *testing.T) {
	ctx := newBrowserContext(t)
	var env []string
	if storetest.Postgres() {
		env = append(env, "WARDEN_DATABASE_URL="+storetest.URL(t), "WARDEN_DB_MAX_CONNS=5")
	}
	p := startProcess(t, "", env...)
	if status, code := runJourney(t, p, "When will ORD-1001 arrive? Please send it to my office instead"); status != 200 {
		t.Fatalf("journey = %d %s", status, code)
	}
	signIn(t, ctx, p, "erin")
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.URL+"/labels"),
		chromedp.WaitVisible(byTestID("label-settings-form")),
		chromedp.SetValue(css("#label-sample"), "100"),
		chromedp.Submit(css("#label-sample")),
		chromedp.WaitVisible(byTestID("notice")),
		chromedp.Navigate(p.URL+"/tenants/acme"),
		chromedp.WaitVisible(byTestID("tenant-dual-control-form")),
		chromedp.SetValue(css(`#dual_control_currency`), "USD"),
		chromedp.SetValue(css(`#dual_control`), "1000000.00"),
		chromedp.SetValue(css(`#dual-control-reason`), "Finance approved bulk refunds for the recall of the blue kettles"),
		chromedp.Submit(css(`#dual_control`)),
		chromedp.WaitVisible(byTestID("change-status")),
	)
	if err != nil {
		t.Fatalf("erin samples every journey and asks for a change: %v\nwarden logs:\n%s", err, p.logs)
	}

	// On a wide screen the queue stays a table: its header row shows, and
	// no cell carries its column's name.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900), chromedp.Navigate(p.URL+"/changes"), chromedp.WaitVisible(byTestID("changes-pending"))); err != nil {
		t.Fatal(err)
	}
	if !visible(t, ctx, css(`[data-testid="changes-pending"] thead th:last-child`)) {
		t.Errorf("at 1366 px the Changes queue's header row does not show")
	}
	for _, c := range phoneCells(t, ctx, "changes-pending") {
		if c.Label != "" {
			t.Errorf("at 1366 px the cell %q shows its column's name %q", c.Text, c.Label)
		}
	}

	// A channel and a route, so the Notifications page's tables have rows.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1366, 900),
		chromedp.Navigate(p.URL+"/notifications"),
		chromedp.WaitVisible(byTestID("channel-form")),
		chromedp.SetValue(css("#ch-name"), "ops-slack"),
		chromedp.SetValue(css("#ch-kind"), "slack"),
		chromedp.SetValue(css("#ch-url"), "https://hooks.slack.com/services/T0/B0/phone"),
		chromedp.Click(byTestID("channel-submit")),
		chromedp.WaitVisible(byTestID("channels")),
		chromedp.Click(byTestID("route-submit")),
		chromedp.WaitVisible(byTestID("routes")),
	)
	if err != nil {
		t.Fatalf("erin adds a channel and a route: %v; at %s\nwarden logs:\n%s", err, location(t, ctx), p.logs)
	}
	for _, tc := range []stackCase{
		{"/notifications", []string{"channels", "routes"}, []string{"Name", "Kind", "Sends to", "Status", "When", "Tenant", "Channel", "To", "Only"}},
		{"/changes", []string{"changes-pending"}, []string{"Tenant", "Asked by", "Why", "Asked", "Expires"}},
		{"/labels", []string{"label-queue-table"}, []string{"Tenant", "Routed to", "Status", "Started"}},
		{"/releases", []string{"route-accuracy-weeks", "route-accuracy-skills", "route-accuracy-confusion", "route-accuracy-releases"}, []string{"Week of", "Accuracy", "Routed there", "Right", "False positives", "False negatives", "Belonged to", "Journeys", "Release"}},
		{"/traces", []string{"traces-table"}, []string{"Started", "Tenant", "Input", "Skill", "Status", "Caller", "Cost", "Latency"}},
		{"/actions", []string{"actions-table"}, []string{"Asked", "Target", "Tenant", "Amount", "Status"}},
	} {
		stacks(t, ctx, p, tc)
	}
	// The row's link is its first line, even the Traces list's, whose
	// Journey column comes last on a wide screen.
	for _, tc := range []struct{ page, table, link string }{
		{"/traces", "traces-table", `a[data-testid="trace-link"]`},
		{"/actions", "actions-table", `a[data-testid="action-link"]`},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+tc.page), chromedp.WaitVisible(byTestID(tc.table))); err != nil {
			t.Fatalf("open %s: %v", tc.page, err)
		}
		linkLeads(t, ctx, tc.table, tc.link)
	}

	// The row's link, by the keyboard: in sight once focused, Enter opens it.
	for _, tc := range []struct{ page, table, want, wait string }{
		{"/changes", "changes-pending", "/changes/chg_", "change-status"},
		{"/labels", "label-queue-table", "/traces/", "route-label-form"},
		{"/traces", "traces-table", "/traces/", "trace-input"},
		{"/actions", "actions-table", "/approvals/act_", "action-status"},
	} {
		link := `[data-testid="` + tc.table + `"] tbody tr:first-child a`
		if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+tc.page), chromedp.WaitVisible(byTestID(tc.table)), chromedp.Focus(css(link))); err != nil {
			t.Fatalf("%s: focus the row's link: %v", tc.page, err)
		}
		in, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const a = document.activeElement, r = a.getBoundingClientRect(); return a.matches('`+link+`') && r.width > 0 && r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.bottom <= window.innerHeight; })()`))
		if err != nil || !in {
			t.Errorf("%s: the focused row link is not in sight at %d px (%v)", tc.page, phoneWidth, err)
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent("\r"), chromedp.WaitVisible(byTestID(tc.wait))); err != nil {
			t.Errorf("%s: Enter on the row's link: %v; at %s", tc.page, err, location(t, ctx))
			continue
		}
		if loc := location(t, ctx); !strings.Contains(loc, tc.want) {
			t.Errorf("%s: Enter on the row's link opened %s, want %s…", tc.page, loc, tc.want)
		}
		fits(t, ctx, location(t, ctx), phoneWidth)
	}

	// alice's approvals queue: a table on a wide screen; on her phone one
	// block per pending action, the action's link first, then Tenant,
	// Amount, Impact, Approvals, Waiting and Expires, and its Take button
	// in sight and working.
	actx := newBrowserContext(t)
	signIn(t, actx, p, "alice")
	if err := chromedp.Do(actx, chromedp.EmulateViewport(1366, 900), chromedp.Navigate(p.URL+"/approvals"), chromedp.WaitVisible(`main a[href^="/approvals/act_"]`)); err != nil {
		t.Fatalf("alice's queue shows no approval: %v\nwarden logs:\n%s", err, p.logs)
	}
	if !visible(t, actx, css(`[data-testid="approvals-table"] thead th:last-child`)) {
		t.Errorf("at 1366 px the approvals queue's header row does not show")
	}
	for _, c := range phoneCells(t, actx, "approvals-table") {
		if c.Label != "" {
			t.Errorf("at 1366 px the queue's cell %q shows its column's name %q", c.Text, c.Label)
		}
	}
	stacks(t, actx, p, stackCase{"/approvals", []string{"approvals-table"}, []string{"Tenant", "Amount", "Impact", "Approvals", "Waiting", "Expires"}})
	linkLeads(t, actx, "approvals-table", "a.queue-summary")
	take := `[data-testid="approvals-table"] tbody tr form[data-testid^="take-"] button`
	in, err := chromedp.Run(actx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector('`+take+`'); if (!b) return false; b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth; })()`))
	if err != nil || !in {
		t.Fatalf("at %d px no queue row shows its Take button in sight (%v)", phoneWidth, err)
	}
	if err := chromedp.Do(actx, chromedp.Click(css(take)), chromedp.WaitVisible(`[data-testid="approvals-table"] [data-testid^="claim-"]`)); err != nil {
		t.Fatalf("alice takes an action from the queue on her phone: %v; at %s\nwarden logs:\n%s", err, location(t, actx), p.logs)
	}
	if got := textOf(t, actx, css(`[data-testid="approvals-table"] [data-testid^="claim-"]`)); !strings.Contains(got, "You are reviewing") {
		t.Errorf("after Take on her phone the queue says %q, want You are reviewing", got)
	}
	fits(t, actx, "/approvals after Take", phoneWidth)
	stackedCellsInSight(t, actx, "/approvals after Take")
	attachScreenshot(t, actx, "phone-tables-approvals-taken")
	link := `[data-testid="approvals-table"] tbody tr:first-child a.queue-summary`
	if err := chromedp.Do(actx, chromedp.Focus(css(link)), chromedp.KeyEvent("\r"), chromedp.WaitVisible(byTestID("action-status"))); err != nil {
		t.Errorf("/approvals: Enter on the row's link: %v; at %s", err, location(t, actx))
	} else if loc := location(t, actx); !strings.Contains(loc, "/approvals/act_") {
		t.Errorf("/approvals: Enter on the row's link opened %s", loc)
	}
	p.stop(t)
}

// stackCase is a page whose tables (by data-testid) read as one block per
// row on a phone, and column names some cell of them must show.
type stackCase struct {
	page   string
	tables []string
	labels []string // column names a cell shows before its value
}

// stacks opens tc.page on a phone and fails unless the page is no wider
// than the phone, every cell of its tables lies whole in sight with room
// for its column's name, no table's card scrolls sideways, and each of
// tc.labels is shown before some cell.
func stacks(t *testing.T, ctx context.Context, p *process, tc stackCase) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 844), chromedp.Navigate(p.URL+tc.page), chromedp.WaitVisible(byTestID(tc.tables[len(tc.tables)-1]))); err != nil {
		t.Fatalf("open %s: %v\nwarden logs:\n%s", tc.page, err, p.logs)
	}
	fits(t, ctx, tc.page, phoneWidth)
	for _, table := range tc.tables {
		cells := phoneCells(t, ctx, table)
		if len(cells) == 0 {
			t.Errorf("%s: the %s table has no cell", tc.page, table)
		}
		for _, c := range cells {
			if c.Width <= 0 || c.Left < 0 || c.Right > phoneWidth || c.Clipped {
				t.Errorf("%s: %s's cell %q (%s) is not whole in sight at %d px: left %.0f, right %.0f, clipped %v", tc.page, table, c.Text, c.Label, phoneWidth, c.Left, c.Right, c.Clipped)
			}
			if c.Label != "" && c.Room < 100 {
				t.Errorf("%s: %s's cell %q leaves %.0f px for its column's name %q: the name is out of sight", tc.page, table, c.Text, c.Room, c.Label)
			}
		}
		if s, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`(() => { const e = document.querySelector('[data-testid="`+table+`"]').closest('.card'); return [e.scrollWidth, e.clientWidth]; })()`)); err != nil || s[0] > s[1] {
			wide, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const card = document.querySelector('[data-testid="`+table+`"]').closest('.card'), right = card.getBoundingClientRect().right - parseFloat(getComputedStyle(card).paddingRight) - parseFloat(getComputedStyle(card).borderRightWidth); return Array.from(card.querySelectorAll('*')).filter(e => e.getBoundingClientRect().right > right + 1).slice(0, 4).map(e => Math.round(e.getBoundingClientRect().right - right) + ' ' + e.tagName.toLowerCase() + (e.dataset.testid ? '[' + e.dataset.testid + ']' : '') + ' ' + e.textContent.trim().slice(0, 30)); })()`))
			t.Errorf("%s: the %s table's card scrolls sideways (%v, %v): %q sticks out", tc.page, table, s, err, wide)
		}
	}
	shown := map[string]bool{}
	for _, table := range tc.tables {
		for _, c := range phoneCells(t, ctx, table) {
			shown[c.Label] = true
		}
	}
	for _, l := range tc.labels {
		if !shown[l] {
			t.Errorf("%s: no cell is named %q at %d px; names shown: %v", tc.page, l, phoneWidth, shown)
		}
	}
	attachScreenshot(t, ctx, "phone-tables"+strings.ReplaceAll(tc.page, "/", "-"))
	for _, table := range tc.tables {
		if dir := os.Getenv("WARDEN_SCREENSHOTS"); dir != "" {
			if png, err := chromedp.Run(ctx, chromedp.Screenshot(byTestID(table))); err == nil {
				os.WriteFile(filepath.Join(dir, "phone-table-"+table+".png"), png, 0o644)
			}
		}
	}
}

// linkLeads fails unless, in the first row of the table with this
// data-testid, the link matched by link lies above every named cell.
func linkLeads(t *testing.T, ctx context.Context, table, link string) {
	t.Helper()
	first, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const row = document.querySelector('[data-testid="`+table+`"] tbody tr'), a = row.querySelector('`+link+`').getBoundingClientRect(); return a.width > 0 && Array.from(row.querySelectorAll('td[data-label]:not([data-label=""])')).every(td => td.getBoundingClientRect().top >= a.bottom - 1); })()`))
	if err != nil || !first {
		t.Errorf("at %d px the %s row's link is not its first line (%v)", phoneWidth, table, err)
	}
}

// stackedCellsInSight fails when a cell of a table laid out for phones
// (.table-stack: one block per row) lies outside the viewport's width.
func stackedCellsInSight(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('.table-stack tbody td')).filter(td => { const r = td.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; }).slice(0, 5).map(td => td.textContent.trim().slice(0, 40))`))
	if err != nil {
		t.Fatalf("measure %s: %v", where, err)
	}
	if len(out) > 0 {
		t.Errorf("%s: table cells out of sight at %d px: %q", where, phoneWidth, out)
	}
}

type phoneCell struct {
	Text, Label        string
	Left, Right, Width float64
	Clipped            bool
	Room               float64 // the cell's left padding, where its column's name shows; its width when the name shows above
}

// phoneCells measures each body cell of the table with this data-testid:
// where it lies, whether its content is cut off, and the column name
// shown before it (its ::before content, when not none).
func phoneCells(t *testing.T, ctx context.Context, testid string) []phoneCell {
	t.Helper()
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]phoneCell](`Array.from(document.querySelectorAll('[data-testid="`+testid+`"] tbody td')).map(td => {
		const r = td.getBoundingClientRect(), b = getComputedStyle(td, '::before'), c = b.content;
		return {Text: td.textContent.trim().slice(0, 40), Label: (c && c !== 'none' && c !== 'normal') ? JSON.parse(c) : '',
			Left: r.left, Right: r.right, Width: r.width, Clipped: td.scrollWidth > td.clientWidth + 1, Room: b.float === 'none' ? r.width : parseFloat(getComputedStyle(td).paddingLeft)};
	})`))
	if err != nil {
		t.Fatalf("measure %s: %v", testid, err)
	}
	return cells
}
