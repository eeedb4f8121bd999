package main

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	_ "modernc.org/sqlite"

	"github.com/wardenhq/warden/platform/wait"
)

// console is a signed-in console user driven over plain HTTP.
type console struct {
	t    *testing.T
	c    *http.Client
	base string
}

func signInHTTP(t *testing.T, base, user string) *console {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &console{t: t, c: &http.Client{Jar: jar, Timeout: 20 * time.Second}, base: base}
	waitFor(t, "the identity provider", func() bool {
		doc, _ := c.get("/login")
		return doc.Find(`[data-testid="login-button"]`).Length() == 1
	})
	doc, u := c.get("/auth/login")
	form := doc.Find("form").First()
	action, _ := form.Attr("action")
	id, _ := form.Find(`input[name="authRequestID"]`).Attr("value")
	target, _ := u.Parse(action)
	resp, err := c.c.PostForm(target.String(), url.Values{"authRequestID": {id}, "username": {user}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/" {
		t.Fatalf("sign-in as %s ended at %s", user, resp.Request.URL)
	}
	return c
}

func (c *console) get(path string) (*goquery.Document, *url.URL) {
	c.t.Helper()
	resp, err := c.c.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(b))
	return doc, resp.Request.URL
}

// approve submits the action page's approve form as the user would.
func (c *console) approve(actionID string) {
	c.t.Helper()
	doc, _ := c.get("/approvals/" + actionID)
	form := doc.Find(`[data-testid="approve-form"]`)
	csrf, _ := form.Find(`input[name="_csrf"]`).Attr("value")
	digest, _ := form.Find(`input[name="digest"]`).Attr("value")
	if digest == "" {
		c.t.Fatalf("no approve form on the page of %s", actionID)
	}
	resp, err := c.c.PostForm(c.base+"/approvals/"+actionID+"/decide", url.Values{"_csrf": {csrf}, "decision": {"approve"}, "digest": {digest}})
	if err == nil {
		resp.Body.Close()
	}
	// The process may die before it answers: that is the point.
}

func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCrashAfterProviderCommit kills the real warden process right after
// the payments provider commits a refund and before Warden records it;
// after a restart the same refund completes — one effect, one receipt.
func TestCrashAfterProviderCommit(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir, "WARDEN_TEST_CRASH_AFTER_COMMIT=issue_refund")
	db := openRO(t, filepath.Join(dir, "warden.db"))
	var actionID, journeyID string
	err := db.QueryRow(`SELECT id, journey_id FROM actions WHERE status = 'pending' AND approvals_required = 1 AND summary LIKE '%$45.50%'`).Scan(&actionID, &journeyID)
	if err != nil {
		t.Fatalf("the demo's $45.50 refund: %v", err)
	}

	signInHTTP(t, p.URL, "alice").approve(actionID)
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("warden exited with %v, want the test fault's exit code 3\n%s", err, p.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("warden did not crash after the provider committed\n%s", p.logs)
	}

	simDB := openRO(t, filepath.Join(dir, "simprovider.db"))
	effects := func() int {
		var n int
		if err := simDB.QueryRow(`SELECT COUNT(*) FROM effects WHERE tool = 'issue_refund'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := effects(); n != 1 {
		t.Fatalf("provider effects after the crash = %d, want 1", n)
	}
	var state, status string
	db.QueryRow(`SELECT e.state, a.status FROM effects e JOIN actions a ON a.id = e.action_id WHERE a.id = ?`, actionID).Scan(&state, &status)
	if state != "reserved" || status != "executing" {
		t.Fatalf("after the crash: ledger %q, action %q; want reserved and executing (the crash window)", state, status)
	}

	// Restart without the fault: recovery asks the provider with the same
	// key, which answers with the committed receipt.
	p2 := startProcess(t, dir)
	var receipt string
	if !wait.ForEvery(30*time.Second, 100*time.Millisecond, func() bool {
		db.QueryRow(`SELECT status, receipt FROM actions WHERE id = ?`, actionID).Scan(&status, &receipt)
		return status == "executed"
	}) {
		t.Fatalf("action still %q after restart\n%s", status, p2.logs)
	}
	if n := effects(); n != 1 {
		t.Errorf("provider effects after recovery = %d, want exactly 1", n)
	}
	var simReceipt string
	simDB.QueryRow(`SELECT receipt FROM effects WHERE tool = 'issue_refund'`).Scan(&simReceipt)
	var refundID string
	simDB.QueryRow(`SELECT json_extract(receipt, '$.refund_id') FROM effects WHERE tool = 'issue_refund'`).Scan(&refundID)
	if refundID == "" || !strings.Contains(receipt, refundID) {
		t.Errorf("recorded receipt %s does not match the provider's %s", receipt, simReceipt)
	}
	db.QueryRow(`SELECT state FROM effects WHERE action_id = ?`, actionID).Scan(&state)
	var jstatus string
	db.QueryRow(`SELECT status FROM journeys WHERE id = ?`, journeyID).Scan(&jstatus)
	if state != "recorded" || jstatus != "completed" {
		t.Errorf("ledger %q, journey %q; want recorded and completed", state, jstatus)
	}
	p2.stop(t)
}
