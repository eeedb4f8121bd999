package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/wardenhq/warden/audit"
)

// TestBrowserAuditTrail: alice approves the $45.50 refund and Warden
// executes it. Dave, the auditor, opens the audit trail from the
// navigation, filters it to that action by typing its id, opens the
// action's decision trail from one of its events and reads the steps in
// order, each with its seq.
func TestBrowserAuditTrail(t *testing.T) {
	ctx := newBrowserContext(t)
	p := startProcess(t, "")
	signIn(t, ctx, p, "alice")
	action := openFirstInQueue(t, ctx, p, "?max=50") // the $45.50 refund
	actionID := action[strings.LastIndex(action, "/")+1:]
	err := chromedp.Do(ctx,
		chromedp.SendKeys(css("#approve-comment"), "double charge confirmed"),
		chromedp.Click(byTestID("approve")),
		chromedp.WaitVisible(byTestID("notice")),
	)
	if err != nil {
		t.Fatalf("alice approves: %v\nwarden logs:\n%s", err, p.logs)
	}
	waitActionStatus(t, ctx, p, "executed")
	if err := chromedp.Do(ctx, chromedp.Click(byTestID("logout")), chromedp.WaitVisible(byTestID("login-button"))); err != nil {
		t.Fatalf("alice signs out: %v", err)
	}

	signIn(t, ctx, p, "dave")
	err = chromedp.Do(ctx,
		chromedp.Click(css(`nav.nav a[href="/audit"]`)),
		chromedp.WaitVisible(byTestID("audit-table")),
		chromedp.SendKeys(css("#subject_type"), "action"),
		chromedp.SendKeys(css("#subject_id"), actionID+kb.Enter),
		// The filtered page comes back with the typed value in the input's
		// attribute (typing sets only the property).
		chromedp.WaitVisible(css(`#subject_id[value="`+actionID+`"]`)),
		chromedp.WaitVisible(css(`[data-testid="trail-link"]`)),
	)
	if err != nil {
		t.Fatalf("dave filters the audit trail to %s: %v\nwarden logs:\n%s", actionID, err, p.logs)
	}
	if loc := location(t, ctx); !strings.Contains(loc, "subject_id="+actionID) {
		t.Errorf("filtered at %s, want the subject in the address", loc)
	}
	verbs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid="audit-table"] tbody [data-testid="event-verb"]')).map(e => e.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(verbs, []string{"action.executed", "action.approved", "action.requested"}) {
		t.Errorf("filtered events = %v, want the action's three, newest first", verbs)
	}
	screenshot(ctx, "audit-filtered")

	err = chromedp.Do(ctx,
		chromedp.Click(css(`[data-testid="audit-table"] tbody tr:first-child [data-testid="trail-link"]`)),
		chromedp.WaitVisible(byTestID("trail-steps")),
	)
	if err != nil {
		t.Fatalf("open the decision trail: %v\nwarden logs:\n%s", err, p.logs)
	}
	steps, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid="trail-steps"] tbody tr')).map(r => r.dataset.kind + " " + r.querySelector('[data-testid="trail-seq"]').textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || !strings.HasPrefix(steps[0], "requested ") || !strings.HasPrefix(steps[1], "approved ") || !strings.HasPrefix(steps[2], "executed ") {
		t.Fatalf("trail steps = %v, want requested, approved, executed with their seqs", steps)
	}
	for _, s := range steps {
		if seq := strings.Fields(s)[1]; seq == "" || strings.Trim(seq, "0123456789") != "" {
			t.Errorf("step %q has no seq", s)
		}
	}
	if s := textOf(t, ctx, css(`[data-testid="trail-step-2"] [data-testid="trail-sentence"]`)); !strings.Contains(s, "Alice Approver approved") || !strings.Contains(s, "double charge confirmed") {
		t.Errorf("approval step reads %q", s)
	}
	if r := textOf(t, ctx, byTestID("trail-receipt")); !strings.Contains(r, "refund_id") {
		t.Errorf("receipt = %q", r)
	}
	screenshot(ctx, "audit-trail")

	// Back on the filtered list, dave downloads the JSONL export and its
	// manifest (the browser fetches both links with his session), and the
	// pair verifies offline.
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL+"/audit?subject_type=action&subject_id="+actionID), chromedp.WaitVisible(byTestID("export-jsonl"))); err != nil {
		t.Fatalf("back to the list: %v", err)
	}
	download := func(testid string) []byte {
		t.Helper()
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector('[data-testid="`+testid+`"]').href, {credentials: "same-origin"}).then(r => r.ok ? r.text() : "HTTP " + r.status)`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("download %s: %v", testid, err)
		}
		return []byte(body)
	}
	export, manifestRaw := download("export-jsonl"), download("export-jsonl-manifest")
	m, err := audit.ReadManifest(bytes.NewReader(manifestRaw))
	if err != nil {
		t.Fatalf("the manifest does not read (%v): %s", err, manifestRaw)
	}
	rep, err := audit.VerifyExport(bytes.NewReader(export), m, nil)
	if err != nil || !rep.OK() || m.Rows != 3 || m.Filters.SubjectID != actionID {
		t.Errorf("verify-export of dave's download = %+v, %v; rows %d, filters %+v; want it to verify with the action's 3 events", rep, err, m.Rows, m.Filters)
	}
	p.stop(t)
}
