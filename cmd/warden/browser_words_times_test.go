package main

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// pageReading is what a page shows people, read in the browser: its text
// without the JSON it shows as JSON (pre, code, the raw disclosures), the
// statuses it shows as badges, and how many times it gives a machine
// value for.
type pageReading struct {
	Text     string     `json:"text"`
	Statuses [][]string `json:"statuses"` // [shown, data-status]
	Times    int        `json:"times"`
	BadTimes []string   `json:"badTimes"` // <time> without an RFC 3339 datetime
	Links    []string   `json:"links"`
}

const readPageJS = `(() => {
	const body = document.body.cloneNode(true);
	body.querySelectorAll('pre, code, textarea, script, style, template, details.raw, td.details, .payload').forEach(e => e.remove());
	const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
	return {
		text: body.textContent.replace(/\s+/g, ' '),
		statuses: Array.from(document.querySelectorAll('[data-status], .badge')).map(e => [e.textContent.trim(), e.getAttribute('data-status') || '']),
		times: body.querySelectorAll('time').length,
		badTimes: Array.from(document.querySelectorAll('time')).filter(e => !rfc3339.test(e.getAttribute('datetime') || '')).map(e => e.outerHTML),
		links: Array.from(document.querySelectorAll('main a[href], nav a[href]')).map(a => a.getAttribute('href')),
	};
})()`

var (
	// anyTime is a date with a time of day, in whatever format.
	anyTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?Z?(?: UTC)?`)
	// oneTime is the one format pages show a time in.
	oneTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$`)
)

// checkWordsAndTimes fails when a page shows a status in snake_case or in
// lower case, or a time in a second format, or names the zone in a
// heading instead of on each value.
func checkWordsAndTimes(t *testing.T, ctx context.Context, where string) pageReading {
	t.Helper()
	r, err := chromedp.Run(ctx, chromedp.Evaluate[pageReading](readPageJS))
	if err != nil {
		t.Fatalf("read %s: %v", where, err)
	}
	for _, s := range r.Statuses {
		shown, raw := s[0], s[1]
		if strings.Contains(shown, "_") || (raw != "" && shown != "" && shown[0] >= 'a' && shown[0] <= 'z') {
			t.Errorf("%s shows the status %q (%s) as stored, not in words", where, shown, raw)
		}
	}
	if strings.Contains(r.Text, "awaiting_approval") {
		t.Errorf(`%s shows "awaiting_approval"`, where)
	}
	found := anyTime.FindAllString(r.Text, -1)
	for _, s := range found {
		if !oneTime.MatchString(s) {
			t.Errorf("%s shows the time %q, not in the one format (2026-03-09 12:05:07 UTC)", where, s)
		}
	}
	if r.Times < len(found) {
		t.Errorf("%s shows %d times, %d of them in <time datetime>", where, len(found), r.Times)
	}
	for _, b := range r.BadTimes {
		t.Errorf("%s: %s has no RFC 3339 datetime", where, b)
	}
	if strings.Contains(r.Text, "(UTC)") {
		t.Errorf(`%s names the zone in a heading, "(UTC)"`, where)
	}
	return r
}

// TestBrowserWordsAndTimes clicks through the console as an approver, an
// on-call engineer, an auditor and an admin, after a refund was approved
// and executed and another rejected, and checks that no page shows a
// status in snake_case or a time in a second format, and that the longer
// times still fit a 1280 px window.
func TestBrowserWordsAndTimes(t *testing.T) {
	p := startProcess(t, "")

	// alice approves the $45.50 refund (one approver: it executes) and
	// rejects the $54.00 one, so pages show more than pending actions.
	ctx := newBrowserContext(t)
	signIn(t, ctx, p, "alice")
	for _, d := range []struct{ amount, button, comment string }{
		{"$45.50", "approve", "#approve-comment"},
		{"$54.00", "reject", "#reject-comment"},
	} {
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('[data-testid="waiting-list"] li a')).find(a => a.textContent.includes("`+d.amount+`"))?.getAttribute("href") ?? ""`))
		if err != nil || href == "" {
			t.Fatalf("no link to the %s refund on alice's home (%v)", d.amount, err)
		}
		err = chromedp.Do(ctx,
			chromedp.Click(css(`[data-testid="waiting-list"] a[href="`+href+`"]`)),
			chromedp.WaitVisible(byTestID("action-summary")),
			chromedp.SendKeys(css(d.comment), "checked against the order"),
			chromedp.Click(byTestID(d.button)),
			chromedp.WaitVisible(byTestID("notice")),
			chromedp.Click(css(`nav.nav a[href="/"]`)),
			chromedp.WaitVisible(byTestID("whoami")),
		)
		if err != nil {
			t.Fatalf("alice decides the %s refund: %v\nwarden logs:\n%s", d.amount, err, p.logs)
		}
	}

	for _, user := range []string{"alice", "carol", "dave", "erin"} {
		t.Run(user, func(t *testing.T) {
			ctx := newBrowserContext(t)
			signIn(t, ctx, p, user)
			visited := map[string]bool{}
			queue := []string{"/"}
			// Every page the navigation offers, and the pages those link
			// to one click further (an action, a trace, a key, a tenant).
			for depth := 0; depth < 3 && len(queue) > 0 && len(visited) < 60; depth++ {
				var next []string
				for _, path := range queue {
					if visited[path] || len(visited) >= 60 {
						continue
					}
					visited[path] = true
					if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+path), chromedp.WaitReady("body")); err != nil {
						t.Fatalf("open %s: %v", path, err)
					}
					r := checkWordsAndTimes(t, ctx, user+" on "+path)
					checkFitsWidth(t, ctx, user+" on "+path)
					for _, l := range r.Links {
						if u, err := url.Parse(l); err == nil && u.Host == "" && strings.HasPrefix(u.Path, "/") && worthVisiting(u) && !visited[u.Path] {
							next = append(next, onePerKind(next, u.Path)...)
						}
					}
				}
				queue = next
			}
			t.Logf("%s: %d pages checked", user, len(visited))
			if len(visited) < 5 {
				t.Errorf("%s reached only %d pages: %v", user, len(visited), visited)
			}
		})
	}
	p.stop(t)
}

// worthVisiting leaves out links that change something, download a file
// or sign out: the click-through only reads.
func worthVisiting(u *url.URL) bool {
	if u.RawQuery != "" {
		return false
	}
	for _, skip := range []string{"/logout", "/export", "/static/", "/metrics", "/healthz", "/v1/", "/login"} {
		if strings.Contains(u.Path, skip) {
			return false
		}
	}
	return true
}

// onePerKind keeps the crawl small: at most three pages of each kind
// ("/approvals/act_…", "/traces/…") beyond the lists.
func onePerKind(queued []string, path string) []string {
	kind := path
	if i := strings.LastIndex(path, "/"); i > 0 {
		kind = path[:i]
	}
	n := 0
	for _, q := range queued {
		if q == path {
			return nil
		}
		if strings.HasPrefix(q, kind+"/") {
			n++
		}
	}
	if n >= 3 {
		return nil
	}
	return []string{path}
}
