package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/store/storetest"
)

const pauseRunbook = `---
id: pause-refunds
title: Pause refunds
owner: payments-oncall
severity: high
actions:
  - id: stop-refunds
    label: Switch off issue_refund
    description: stops every refund
    tool: switch_tool
    args: {name: issue_refund, state: "off"}
---
# Pause refunds

Stop refunds while the provider is down.
`

// TestDirectoryRunbookButtonWaitsForASecondAdmin is issue 30's runbook
// story in the console: a button from WARDEN_RUNBOOK_DIR is shown
// disabled and its press refused (409, nothing ran); erin asks to publish
// it and cannot approve her own change; frank approves and carol's press
// runs. After the file changes the button's arguments and Warden
// restarts, the button is held again. The embedded runbooks' buttons are
// live throughout.
func TestDirectoryRunbookButtonWaitsForASecondAdmin(t *testing.T) {
	rbDir := t.TempDir()
	file := filepath.Join(rbDir, "pause-refunds.md")
	if err := os.WriteFile(file, []byte(pauseRunbook), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_RUNBOOK_DIR": rbDir}
	if storetest.Postgres() {
		env["WARDEN_DATABASE_URL"] = storetest.URL(t) // the restart below opens the same database
	}
	in := startWardenDemo(t, env)
	in.waitReady(t)
	ctx := context.Background()
	refundsOn := func() bool {
		t.Helper()
		tl, err := catalog.Get(ctx, in.DB.Read(), "issue_refund")
		if err != nil {
			t.Fatal(err)
		}
		return tl.Enabled
	}
	if !refundsOn() {
		t.Fatal("issue_refund is off before anything was pressed")
	}
	const rbPath, actPath = "/runbooks/pause-refunds", "/runbooks/pause-refunds/actions/stop-refunds"

	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	idx := carol.get("/runbooks")
	if got := text(idx, "runbook-held-pause-refunds"); !strings.Contains(got, "1 button waits for a second admin") {
		t.Errorf("Runbooks list marks pause-refunds %q, want one button waiting for a second admin", got)
	}
	if idx.Doc.Find(`[data-testid^="runbook-held-"]`).Length() != 1 {
		t.Errorf("the list marks %d runbooks as held, want only the directory one", idx.Doc.Find(`[data-testid^="runbook-held-"]`).Length())
	}
	p := carol.get(rbPath)
	if p.Status != http.StatusOK || p.Doc.Find(`[data-testid="action-stop-refunds-held"][aria-disabled="true"]`).Length() != 1 ||
		p.Doc.Find(`a[data-testid="action-stop-refunds"]`).Length() != 0 {
		t.Fatalf("runbook page (%d): want the button disabled and no link to press it:\n%s", p.Status, p.Body)
	}
	if why := text(p, "action-stop-refunds-held-why"); !strings.Contains(why, "Waits for a second admin to publish") || !strings.Contains(why, "new in pause-refunds.md") {
		t.Errorf("held button says %q, want why it waits", why)
	}
	if p.Doc.Find(`[data-testid="runbook-publish-form"]`).Length() != 0 {
		t.Error("on-call is offered the Publish buttons form")
	}
	if c := carol.get(actPath); c.Status != http.StatusConflict {
		t.Errorf("confirmation of a held button = %d, want 409", c.Status)
	}
	before := auditCount(t, in.DB)
	p = carol.post(actPath, carol.withCSRF(url.Values{"reason": {"provider down"}, "token": {"held-token-1"}}), nil)
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "waits for a second admin to publish") || !strings.Contains(p.Body, "Nothing ran") {
		t.Fatalf("press of a held button = %d, want 409 saying it waits for a second admin:\n%s", p.Status, p.Body)
	}
	if !refundsOn() || runbookRunCount(t, in.DB) != 0 || auditCount(t, in.DB) != before {
		t.Fatalf("after the refused press: refunds on %v, %d runs, audit %d → %d; want nothing ran or recorded",
			refundsOn(), runbookRunCount(t, in.DB), before, auditCount(t, in.DB))
	}

	// erin asks to publish; she lands on a pending change she cannot approve.
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	ep := erin.get(rbPath)
	if ep.Doc.Find(`[data-testid="runbook-publish-form"]`).Length() != 1 || !strings.Contains(text(ep, "runbook-held-stop-refunds"), "name=issue_refund, state=off") {
		t.Fatalf("erin's runbook page lacks the Publish buttons form or what the button does:\n%s", ep.Body)
	}
	landed := erin.post(rbPath+"/publish", erin.withCSRF(url.Values{"change_reason": {"new refunds runbook"}}), nil)
	if landed.Status != http.StatusOK || !strings.HasPrefix(landed.URL.Path, "/changes/chg_") || !strings.Contains(text(landed, "notice"), "second admin") {
		t.Fatalf("publish landed on %s (%d) %q, want its pending change", landed.URL, landed.Status, text(landed, "notice"))
	}
	row := landed.Doc.Find(`[data-testid="change-button-stop-refunds"]`)
	if st, _ := row.Attr("data-state"); st != "new" || !strings.Contains(row.Text(), "Switch off issue_refund") || !strings.Contains(row.Text(), "switch_tool") ||
		!strings.Contains(row.Text(), "name=issue_refund, state=off") {
		t.Errorf("change page lists the button as %q %q, want it new with its label, tool and arguments", st, row.Text())
	}
	if landed.Doc.Find(`[data-testid="change-approve"]`).Length() != 0 || !strings.Contains(text(landed, "change-why"), "another admin") {
		t.Errorf("erin is offered to approve her own change (why %q)", text(landed, "change-why"))
	}
	ch, err := changes.Get(ctx, in.DB.Read(), strings.TrimPrefix(landed.URL.Path, "/changes/"))
	if err != nil || ch.Kind != changes.RunbookPublish || ch.Status != changes.Pending {
		t.Fatalf("the change = %+v, %v; want a pending runbook.publish", ch, err)
	}
	if own := erin.post(landed.URL.Path+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {ch.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own publish = %d, want 403", own.Status)
	}
	if p := carol.get(rbPath); p.Doc.Find(`[data-testid="action-stop-refunds-held"]`).Length() != 1 || p.Doc.Find(`[data-testid="pending-change-link"]`).Length() != 1 {
		t.Errorf("while pending: want the button still held and the pending change linked:\n%s", p.Body)
	}

	// frank approves: the button is live at once, without a restart.
	approveChangeAt(t, in, landed.URL.Path)
	p = carol.get(rbPath)
	if p.Doc.Find(`a[data-testid="action-stop-refunds"]`).Length() != 1 || p.Doc.Find(`[data-testid="runbook-publish"]`).Length() != 0 {
		t.Fatalf("after frank approved: want the button live and nothing left to publish:\n%s", p.Body)
	}
	if got := text(carol.get("/runbooks"), "runbook-held-pause-refunds"); got != "" {
		t.Errorf("the list still marks pause-refunds: %q", got)
	}
	tok := confirmToken(t, carol, actPath)
	p = carol.post(actPath, carol.withCSRF(url.Values{"reason": {"provider down"}, "token": {tok}}), nil)
	if p.Status != http.StatusOK || statusOf(p, "run-status") != "done" || refundsOn() {
		t.Fatalf("press after publishing = %d, status %q, refunds on %v; want done and refunds off", p.Status, statusOf(p, "run-status"), refundsOn())
	}
	if ev := lastAuditOf(t, in, "runbook.publish", "pause-refunds"); ev.Details["labels"] != "Switch off issue_refund" || ev.Details["change"] != ch.ID || ev.Actor.ID == "" {
		t.Errorf("runbook.publish event = %+v, want the button and the change named", ev)
	}

	// An embedded runbook's button needs nobody: its confirmation opens.
	if c := carol.get("/runbooks/pii-in-traces/actions/switch-off-refunds"); c.Status != http.StatusOK {
		t.Errorf("embedded button's confirmation = %d, want 200", c.Status)
	}

	// The file now switches off another tool; Warden restarts with it.
	if err := os.WriteFile(file, []byte(strings.Replace(pauseRunbook, "name: issue_refund", "name: lookup_order", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	in.Stop(t)
	again := startWardenDemo(t, env)
	again.waitReady(t)
	carol = newBrowser(t, again.URL)
	carol.loginDev("carol")
	p = carol.get(rbPath)
	if why := text(p, "action-stop-refunds-held-why"); !strings.Contains(why, "changed since it was published") || !strings.Contains(why, "name=issue_refund") {
		t.Fatalf("after the file changed the arguments: held %q, want it held again as changed:\n%s", why, p.Body)
	}
	runs := runbookRunCount(t, again.DB)
	p = carol.post(actPath, carol.withCSRF(url.Values{"reason": {"again"}, "token": {"held-token-2"}}), nil)
	if p.Status != http.StatusConflict || runbookRunCount(t, again.DB) != runs {
		t.Fatalf("press of the changed button = %d (runs %d → %d), want 409 and nothing ran", p.Status, runs, runbookRunCount(t, again.DB))
	}
	if c := carol.get("/runbooks/pii-in-traces/actions/switch-off-refunds"); c.Status != http.StatusOK {
		t.Errorf("after restart: embedded button's confirmation = %d, want 200", c.Status)
	}
}

// startWithRunbook starts a demo Warden whose runbook directory holds
// pause-refunds.md with src, with more settings; env is returned so a
// restart opens the same data and database.
func startWithRunbook(t *testing.T, src string, more map[string]string) (*instance, map[string]string, string) {
	t.Helper()
	rbDir := t.TempDir()
	file := filepath.Join(rbDir, "pause-refunds.md")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WARDEN_DATA_DIR": t.TempDir(), "WARDEN_RUNBOOK_DIR": rbDir}
	if storetest.Postgres() {
		env["WARDEN_DATABASE_URL"] = storetest.URL(t)
	}
	for k, v := range more {
		env[k] = v
	}
	in := startWardenDemo(t, env)
	in.waitReady(t)
	return in, env, file
}

// TestRunbookPublishApprovedAfterTheFileChangedPublishesNothing: erin
// asks to publish; the file changes the button and Warden restarts before
// frank approves; the approval fails in words and the button stays held,
// since frank approved a definition the file no longer has.
func TestRunbookPublishApprovedAfterTheFileChangedPublishesNothing(t *testing.T) {
	in, env, file := startWithRunbook(t, pauseRunbook, nil)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	landed := erin.post("/runbooks/pause-refunds/publish", erin.withCSRF(url.Values{"change_reason": {"new runbook"}}), nil)
	if !strings.HasPrefix(landed.URL.Path, "/changes/chg_") {
		t.Fatalf("publish landed on %s (%d)", landed.URL, landed.Status)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(pauseRunbook, `state: "off"`, `state: "on"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	in.Stop(t)
	in = startWardenDemo(t, env)
	in.waitReady(t)
	f := newBrowser(t, in.URL)
	f.loginDev("frank")
	cp := f.get(landed.URL.Path)
	digest, _ := cp.Doc.Find(`input[name="digest"]`).Attr("value")
	p := f.post(landed.URL.Path+"/decide", f.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil)
	if st := text(p, "change-status"); !strings.Contains(st, "could not be applied") && !strings.Contains(strings.ToLower(st), "failed") {
		t.Errorf("approval after the file changed: status %q, want it failed", st)
	}
	if !strings.Contains(p.Body, "changed since this was asked for") || !strings.Contains(p.Body, "state=on") {
		t.Errorf("the failure does not say the file changed and to what:\n%s", p.Body)
	}
	c := newBrowser(t, in.URL)
	c.loginDev("carol")
	if rb := c.get("/runbooks/pause-refunds"); rb.Doc.Find(`[data-testid="action-stop-refunds-held"]`).Length() != 1 {
		t.Errorf("after a failed publish the button is not held:\n%s", rb.Body)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM runbook_buttons`); n != 0 {
		t.Errorf("published rows = %d, want none", n)
	}
}

// TestRunbookPublishByBreakGlass: where the installation allows break
// glass, erin publishes at once with a reason; the button is live, the
// change is recorded as break glass, and without a reason nothing is
// published.
func TestRunbookPublishByBreakGlass(t *testing.T) {
	in, _, _ := startWithRunbook(t, pauseRunbook, map[string]string{"WARDEN_BREAK_GLASS": "true"})
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	if p := erin.get("/runbooks/pause-refunds"); p.Doc.Find(`[data-testid="runbook-publish-form"] [data-testid="break-glass"]`).Length() != 1 {
		t.Fatal("break glass not offered on the Publish buttons form")
	}
	if p := erin.post("/runbooks/pause-refunds/publish", erin.withCSRF(url.Values{"break_glass": {"yes"}, "change_reason": {" "}}), nil); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("break glass without a reason = %d, want 422", p.Status)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM runbook_buttons`); n != 0 {
		t.Fatalf("break glass without a reason published %d buttons", n)
	}
	p := erin.post("/runbooks/pause-refunds/publish", erin.withCSRF(url.Values{"break_glass": {"yes"}, "change_reason": {"INC-7: refunds must stop now"}}), nil)
	if got := text(p, "change-status"); got != "applied by break glass — not yet reviewed" {
		t.Errorf("change status = %q (%d %s)", got, p.Status, p.URL)
	}
	c := newBrowser(t, in.URL)
	c.loginDev("carol")
	if rb := c.get("/runbooks/pause-refunds"); rb.Doc.Find(`a[data-testid="action-stop-refunds"]`).Length() != 1 {
		t.Errorf("after break glass the button is not live:\n%s", rb.Body)
	}
	if ev := lastAuditOf(t, in, "runbook.publish", "pause-refunds"); ev.Details["change"] != "" {
		t.Errorf("break-glass publish names change %v, want none", ev.Details["change"])
	}
}

// TestRunbookPublishRefusals: on-call may not ask, with nothing held
// (an embedded runbook) there is nothing to ask for, an unknown runbook
// is not there; none records a change.
func TestRunbookPublishRefusals(t *testing.T) {
	in, _, _ := startWithRunbook(t, pauseRunbook, nil)
	for _, tc := range []struct {
		user   string
		path   string
		status int
	}{
		{"carol", "/runbooks/pause-refunds/publish", http.StatusForbidden},
		{"erin", "/runbooks/tool-provider-outage/publish", http.StatusConflict},
		{"erin", "/runbooks/nope/publish", http.StatusNotFound},
	} {
		b := newBrowser(t, in.URL)
		b.loginDev(tc.user)
		if p := b.post(tc.path, b.withCSRF(url.Values{"change_reason": {"x"}}), nil); p.Status != tc.status {
			t.Errorf("%s POST %s = %d, want %d", tc.user, tc.path, p.Status, tc.status)
		}
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM changes`); n != 0 {
		t.Errorf("refused asks recorded %d changes", n)
	}
}
