package main

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wardenhq/warden/platform/store/storetest"
)

// pageWatch records what the browser reports while a page loads: the
// status of the last document it received, and the errors a person with
// the developer tools open would see (uncaught exceptions, console.error,
// the browser's own errors such as a refused script or a failed load).
type pageWatch struct {
	mu     sync.Mutex
	status int64
	doc    string
	errs   []string
}

func watchPage(t *testing.T, ctx context.Context) *pageWatch {
	t.Helper()
	w := &pageWatch{}
	err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			if e.Type == network.ResourceTypeDocument {
				w.status, w.doc = e.Response.Status, e.Response.URL
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			w.errs = append(w.errs, "uncaught: "+msg)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				w.errs = append(w.errs, "console.error: "+strings.Join(parts, " "))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				w.errs = append(w.errs, fmt.Sprintf("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatalf("listen to the browser: %v", err)
	}
	return w
}

func (w *pageWatch) reset() {
	w.mu.Lock()
	w.status, w.doc, w.errs = 0, "", nil
	w.mu.Unlock()
}

// read returns the document's status and the errors, leaving out the
// browser's note that the document itself answered with an error status
// (the status is judged on its own).
func (w *pageWatch) read() (int64, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []string
	for _, e := range w.errs {
		if w.doc != "" && strings.HasSuffix(e, " "+w.doc) && strings.Contains(e, "the server responded with a status of") {
			continue
		}
		errs = append(errs, e)
	}
	return w.status, errs
}

// pageFacts is what the walk reads from a loaded page.
type pageFacts struct {
	Text       int      // characters of visible text in main
	ErrorPage  string   // the error page's text, if it is one
	Unlabelled []string // visible controls without an accessible name
	NoCSRF     []string // POST forms without the CSRF field
	Nameless   []string // visible links and buttons without a name, images without alt
	DupIDs     []string // ids given to more than one element (a label for one reaches the first)
	H1         int      // headings of the first level
	Stretched  []string // boxes to tick drawn wider than a box, away from their words
	Links      []string // hrefs in the navigation and the page's content
}

const pageFactsJS = `(() => {
	const shown = e => e.checkVisibility({visibilityProperty: true}) && e.getBoundingClientRect().width > 0;
	const text = n => (n ? n.textContent : '').replace(/\s+/g, ' ').trim();
	const named = e => {
		if ((e.getAttribute('aria-label') || '').trim()) return true;
		const by = e.getAttribute('aria-labelledby');
		if (by && by.split(/\s+/).some(id => text(document.getElementById(id)))) return true;
		if (Array.from(e.labels || []).some(l => text(l))) return true;
		return !!(e.getAttribute('title') || '').trim();
	};
	const desc = e => e.tagName.toLowerCase() + (e.type ? '[type=' + e.type + ']' : '') + (e.name ? '[name=' + e.name + ']' : '') + (e.id ? '#' + e.id : '') + (e.closest('form') && e.closest('form').getAttribute('action') ? ' in form ' + e.closest('form').getAttribute('action') : '');
	const controls = Array.from(document.querySelectorAll('input, select, textarea')).filter(e => !['hidden', 'submit', 'button', 'reset', 'image'].includes(e.type) && shown(e));
	const main = document.querySelector('main');
	const err = document.querySelector('[data-testid="error-page"]');
	return {
		Text: main ? main.innerText.trim().length : 0,
		ErrorPage: err ? text(err) : '',
		Unlabelled: controls.filter(e => !named(e)).map(desc),
		NoCSRF: Array.from(document.querySelectorAll('form')).filter(f => (f.getAttribute('method') || 'get').toLowerCase() === 'post' && !(f.querySelector('input[name="_csrf"]') || {}).value).map(f => 'form ' + (f.getAttribute('action') || '(no action)') + (f.dataset.testid ? '[' + f.dataset.testid + ']' : '')),
		Nameless: Array.from(document.querySelectorAll('a[href], button, img')).filter(e => shown(e) && (e.tagName === 'IMG' ? e.getAttribute('alt') === null : !(text(e) || (e.getAttribute('aria-label') || '').trim() || (e.getAttribute('title') || '').trim() || Array.from(e.querySelectorAll('img[alt]')).some(i => i.alt.trim())))).map(e => e.outerHTML.slice(0, 120)),
		DupIDs: Object.entries(Array.from(document.querySelectorAll('[id]')).reduce((m, e) => (m[e.id] = (m[e.id] || 0) + 1, m), {})).filter(([, n]) => n > 1).map(([id, n]) => id + ' x' + n),
		H1: document.querySelectorAll('h1').length,
		Stretched: controls.filter(e => (e.type === 'checkbox' || e.type === 'radio') && e.getBoundingClientRect().width > 40).map(desc),
		Links: Array.from(document.querySelectorAll('nav.nav a[href], main a[href]')).map(a => a.getAttribute('href')),
	};
})()`

// sidewaysJS lists the boxes, other than those meant to scroll (code,
// pre, a diff, a .table-wrap, a field), whose content is wider than they
// are: on a phone it scrolls inside the box or is cut off. Visually
// hidden text (.sr-only) is left out.
const sidewaysJS = `Array.from(document.querySelectorAll('main *')).filter(e => {
	if (e.matches('pre, code, textarea, input, select, .table-wrap, .sr-only, [class*="diff"], [class*="code"]') || e.closest('pre, .table-wrap, .sr-only, [class*="diff"]')) return false;
	const ox = getComputedStyle(e).overflowX;
	return (ox === 'auto' || ox === 'scroll' || ox === 'hidden' || ox === 'clip') && e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 1;
}).slice(0, 4).map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).trim().replace(/\s+/g, '.') : '') + (e.dataset.testid ? '[' + e.dataset.testid + ']' : '') + ' ' + e.scrollWidth + '>' + e.clientWidth + ' ' + e.textContent.trim().replace(/\s+/g, ' ').slice(0, 40))`

// roleWalkPages caps the pages a user's walk opens (each at two widths),
// so that the five walks stay near a minute.
const roleWalkPages = 30

// TestBrowserEveryRoleWalk is the walk an assessor does before trusting
// the console: each dev user (alice approver, carol on-call, dave auditor,
// erin and frank admins) signs in through the development OIDC provider
// and opens every page of their navigation and, one click further, one
// page of each kind those pages link to, at 1366 px and at 390 px. No page
// answers 5xx or comes up blank, no page logs a JavaScript or browser
// error, no page is wider than the phone, every visible field has a
// label, every POST form carries the CSRF field, and no link leads to a
// page that then refuses the user. The pages of the other roles'
// navigations answer 403 with a page that says why, and are not in this
// user's navigation. With WARDEN_TEST_POSTGRES set, the process keeps its
// data in PostgreSQL.
func TestBrowserEveryRoleWalk(t *testing.T) {
	var env []string
	if storetest.Postgres() {
		env = append(env, "WARDEN_DATABASE_URL="+storetest.URL(t), "WARDEN_DB_MAX_CONNS=5")
	}
	p := startProcess(t, "", env...)
	users := []string{"alice", "carol", "dave", "erin", "frank"}

	// Every user's navigation, read over plain HTTP: the union is what the
	// other roles may open, and each user must be refused what is not theirs.
	navs, union := map[string][]string{}, map[string]bool{}
	for _, u := range users {
		doc, _ := signInHTTP(t, p.URL, u).get("/")
		for _, h := range doc.Find("nav.nav a").Map(func(_ int, a *goquery.Selection) string { return a.AttrOr("href", "") }) {
			navs[u] = append(navs[u], h)
			union[h] = true
		}
		if len(navs[u]) == 0 {
			t.Fatalf("%s's home has no navigation\nwarden logs:\n%s", u, p.logs)
		}
	}

	// One Chromium, each user in a browser context of their own (own
	// cookies), quicker to open than a Chromium; a fresh Chromium when
	// less than 40 s of the one's 90 s remain, as on a slow machine.
	var browser context.Context
	walked, pagesOf := map[string]*kindsWalked{}, map[string][]string{}
	for _, user := range users {
		if d, ok := browserDeadline(browser); !ok || time.Until(d) < 40*time.Second {
			browser = newBrowserContext(t)
			if err := chromedp.Do(browser); err != nil {
				t.Fatalf("start the browser: %v", err)
			}
		}
		t.Run(user, func(t *testing.T) {
			start := time.Now()
			ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
			defer cancel()
			w := watchPage(t, ctx)
			signIn(t, ctx, p, user)
			signedIn := time.Since(start)

			// The navigation's pages first, then one page of each kind
			// they link to (a filter or a sort is a kind of its own). A
			// second user with the same navigation (frank after erin)
			// opens home and then the kinds the first one's cap left out.
			sig := strings.Join(navs[user], " ")
			again := walked[sig] != nil
			if !again {
				walked[sig] = &kindsWalked{seen: map[string]bool{}}
			}
			wk := walked[sig]
			var queue []string
			add := func(href string, fromNav bool) {
				u, err := url.Parse(href)
				if err != nil || u.Host != "" || u.Scheme != "" || u.Fragment != "" && u.Path == "" {
					return
				}
				bare := *u
				bare.RawQuery, bare.Fragment = "", ""
				if !worthVisiting(&bare) {
					return
				}
				k := walkKind(bare.Path)
				if q := u.Query(); len(q) > 0 {
					k += "?" + strings.Join(slices.Sorted(maps.Keys(q)), "&")
				}
				if k == "" || k[0] == '?' || wk.seen[k] {
					return
				}
				wk.seen[k] = true
				bare.RawQuery = u.RawQuery
				if !fromNav && len(queue) >= roleWalkPages {
					wk.left = append(wk.left, bare.String())
					return
				}
				queue = append(queue, bare.String())
			}
			nav := 0
			if again {
				queue = append(queue, "/")
				queue = append(queue, wk.left[:min(len(wk.left), roleWalkPages-1)]...)
				wk.left = wk.left[min(len(wk.left), roleWalkPages-1):]
			} else {
				for _, h := range navs[user] {
					add(h, true)
				}
				nav = len(queue)
			}
			open := func(href string, width, height int64) (int64, []string, pageFacts) {
				t.Helper()
				w.reset()
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height), chromedp.Navigate(p.URL+href), chromedp.WaitReady("body")); err != nil {
					t.Fatalf("open %s at %d px: %v\nwarden logs:\n%s", href, width, err, p.logs)
				}
				f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](pageFactsJS))
				if err != nil {
					t.Fatalf("read %s at %d px: %v", href, width, err)
				}
				status, errs := w.read()
				return status, errs, f
			}
			check := func(href string, width int64, status int64, errs []string, f pageFacts) {
				t.Helper()
				where := fmt.Sprintf("%s on %s at %d px", user, href, width)
				switch {
				case status >= 500 || status == 0:
					t.Errorf("%s: status %d: %.200s", where, status, f.ErrorPage)
				case status >= 400:
					t.Errorf("%s: a link of the user's pages leads to a page that answers %d: %.200s", where, status, f.ErrorPage)
				case f.Text < 20:
					t.Errorf("%s: the page is blank (%d characters in main)", where, f.Text)
				}
				if len(errs) > 0 {
					t.Errorf("%s: the browser reports errors: %q", where, errs)
				}
				if len(f.Unlabelled) > 0 {
					t.Errorf("%s: fields without a label: %q", where, f.Unlabelled)
				}
				if len(f.Nameless) > 0 {
					t.Errorf("%s: links or buttons without a name: %q", where, f.Nameless)
				}
				if len(f.DupIDs) > 0 {
					t.Errorf("%s: ids used more than once: %q", where, f.DupIDs)
				}
				if len(f.Stretched) > 0 {
					t.Errorf("%s: boxes to tick stretched away from their words: %q", where, f.Stretched)
				}
				if f.H1 != 1 && status < 400 {
					t.Errorf("%s: %d h1 headings, want one naming the page", where, f.H1)
				}
				if len(f.NoCSRF) > 0 {
					t.Errorf("%s: POST forms without the CSRF field: %q", where, f.NoCSRF)
				}
			}

			for i := 0; i < len(queue); i++ {
				href := queue[i]
				status, errs, f := open(href, 1366, 900)
				check(href, 1366, status, errs, f)
				if i < nav {
					for _, l := range f.Links {
						add(l, false)
					}
				}
			}
			pagesOf[user] = queue
			for _, href := range queue {
				status, errs, f := open(href, phoneWidth, 844)
				check(href, phoneWidth, status, errs, f)
				fits(t, ctx, user+" on "+href, phoneWidth)
				sideways, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](sidewaysJS))
				if err != nil {
					t.Fatal(err)
				}
				if len(sideways) > 0 {
					t.Errorf("%s on %s at %d px: boxes that scroll or cut off sideways: %q", user, href, phoneWidth, sideways)
				}
			}

			// The other roles' pages are refused (all of them are asked
			// over HTTP below); two of them, in the browser at both
			// widths, with a page that says why.
			refused := refusedNav(navs, union, user)
			for _, href := range refused[:min(2, len(refused))] {
				for _, size := range [][2]int64{{1366, 900}, {phoneWidth, 844}} {
					status, errs, f := open(href, size[0], size[1])
					where := fmt.Sprintf("%s on %s (not in the navigation) at %d px", user, href, size[0])
					if status != 403 {
						t.Errorf("%s: status %d, want 403", where, status)
					}
					if !strings.Contains(f.ErrorPage, "403") || len(f.ErrorPage) < 40 {
						t.Errorf("%s: the refusal reads %q, want the error page saying why", where, f.ErrorPage)
					}
					if len(errs) > 0 {
						t.Errorf("%s: the browser reports errors: %q", where, errs)
					}
					fits(t, ctx, where, int(size[0]))
				}
			}
			t.Logf("%s: %d pages at 1366 and %d px in %v (browser and sign-in %v); %v", user, len(queue), phoneWidth, time.Since(start).Round(100*time.Millisecond), signedIn.Round(100*time.Millisecond), queue)
		})
	}

	// Each user asks for the other roles' navigation pages (refused: 403,
	// with the page saying why) and for the pages the others reached one
	// click further (a key, a trace, an action's trail) by their address:
	// a page, or a refusal that says why; never a server error.
	for _, user := range users {
		c := signInHTTP(t, p.URL, user)
		get := func(href string) (int, string) {
			resp, err := c.c.Get(p.URL + href)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			doc, _ := goquery.NewDocumentFromReader(resp.Body)
			return resp.StatusCode, strings.Join(strings.Fields(doc.Find(`[data-testid="error-page"]`).Text()), " ")
		}
		for _, href := range refusedNav(navs, union, user) {
			if status, msg := get(href); status != 403 || !strings.Contains(msg, "403") {
				t.Errorf("%s opens %s (another role's navigation): status %d %q, want 403 and the page saying why", user, href, status, msg)
			}
		}
		for _, other := range users {
			for _, href := range pagesOf[other] {
				if slices.Contains(pagesOf[user], href) {
					continue
				}
				status, msg := get(href)
				switch {
				case status >= 500:
					t.Errorf("%s opens %s (from %s's walk): status %d %q", user, href, other, status, msg)
				case status >= 400 && !strings.Contains(msg, fmt.Sprint(status)):
					t.Errorf("%s opens %s (from %s's walk): status %d without the error page saying why: %q", user, href, other, status, msg)
				case status == 403 && slices.Contains(navs[user], href):
					t.Errorf("%s's navigation offers %s, which refuses them", user, href)
				}
			}
		}
	}
	p.stop(t)
}

// refusedNav is the pages of the other users' navigations that are not in
// user's, sorted.
func refusedNav(navs map[string][]string, union map[string]bool, user string) []string {
	var out []string
	for h := range union {
		if !slices.Contains(navs[user], h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// kindsWalked is what the walks of one navigation have opened (by
// walkKind) and the pages the cap left for a second user with it.
type kindsWalked struct {
	seen map[string]bool
	left []string
}

// walkKind is pageKind with the first segment under a list taken as a
// name when more follow: /models/demo-agent/edit and
// /models/refund-agent/edit are one kind, /keys/new stays itself.
func walkKind(path string) string {
	k := pageKind(path)
	if segs := strings.Split(strings.TrimPrefix(k, "/"), "/"); len(segs) >= 3 {
		segs[1] = "*"
		return "/" + strings.Join(segs, "/")
	}
	return k
}

func browserDeadline(ctx context.Context) (time.Time, bool) {
	if ctx == nil {
		return time.Time{}, false
	}
	return ctx.Deadline()
}
