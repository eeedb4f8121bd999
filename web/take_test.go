package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
)

// TestTakeAndRelease: POST /approvals/:id/take needs the CSRF token and an
// approver (an auditor is refused, nothing is claimed); bob's Take shows
// in alice's queue as "Bob Approver is reviewing" and on the page with
// the advisory note; alice cannot release bob's claim; bob releases it and
// the queue offers Take again.
func TestTakeAndRelease(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ids, err := store.Strings(context.Background(), in.DB.Read(), `SELECT id FROM actions WHERE status = 'pending' ORDER BY amount_minor DESC`)
	if err != nil || len(ids) == 0 {
		t.Fatalf("pending actions: %v %v", ids, err)
	}
	id := ids[0]
	claims := func() int {
		var n int
		if err := in.DB.Read().QueryRow(`SELECT COUNT(*) FROM action_claims`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	bob := newBrowser(t, in.URL)
	bob.loginDev("bob")
	if p := bob.post("/approvals/"+id+"/take", url.Values{}, nil); p.Status != http.StatusForbidden || claims() != 0 {
		t.Fatalf("take without CSRF = %d (%d claims), want 403 and none", p.Status, claims())
	}
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	if p := dave.post("/approvals/"+id+"/take", dave.withCSRF(url.Values{}), nil); p.Status != http.StatusForbidden || claims() != 0 {
		t.Fatalf("auditor's take = %d (%d claims), want 403 and none", p.Status, claims())
	}
	p := bob.post("/approvals/"+id+"/take", bob.withCSRF(url.Values{}), nil)
	if p.Status != http.StatusOK || !strings.Contains(p.Doc.Find(`[data-testid="claim-holder"]`).Text(), "You are reviewing") {
		t.Fatalf("bob's take: %d, page %q", p.Status, p.Doc.Find(`[data-testid="claim-holder"]`).Text())
	}

	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	q := alice.get("/approvals")
	if got := q.Doc.Find(`[data-testid="claim-` + id + `"]`).Text(); got != "Bob Approver is reviewing" {
		t.Errorf("alice's queue says %q for the taken action", got)
	}
	page := alice.get("/approvals/" + id)
	if got := page.Doc.Find(`[data-testid="claim-holder"]`).Text(); !strings.Contains(got, "Bob Approver is reviewing") || !strings.Contains(got, "you may still decide it") {
		t.Errorf("alice's page says %q", got)
	}
	if page.Doc.Find(`[data-testid="approve"]`).Length() != 1 {
		t.Error("alice is not offered Approve on an action bob took")
	}
	if r := alice.post("/approvals/"+id+"/release", alice.withCSRF(url.Values{}), nil); r.Status != http.StatusConflict || claims() != 1 {
		t.Errorf("alice releasing bob's claim = %d (%d claims), want 409 and bob's kept", r.Status, claims())
	}
	if r := bob.post("/approvals/"+id+"/release", bob.withCSRF(url.Values{}), nil); r.Status != http.StatusOK || claims() != 0 {
		t.Fatalf("bob's release = %d (%d claims)", r.Status, claims())
	}
	q = alice.get("/approvals")
	if q.Doc.Find(`[data-testid="claim-`+id+`"]`).Length() != 0 || q.Doc.Find(`[data-testid="take-`+id+`"]`).Length() != 1 {
		t.Errorf("after release the queue row does not offer Take again")
	}

	// An action proposed with a key alice created: she may not decide
	// it, so her queue offers no Take on it, and the server refuses one.
	if len(ids) < 2 {
		t.Fatalf("the demo has %d pending actions, want 2", len(ids))
	}
	own := ids[1]
	var aliceID, groups string
	if err := in.DB.Read().QueryRow(`SELECT id, idp_groups FROM principals WHERE subject = 'dev-alice'`).Scan(&aliceID, &groups); err != nil {
		t.Fatal(err)
	}
	// Her sign-in kept her groups, for routes that name a group.
	if groups != `["warden-approver","warden-tenant-acme"]` {
		t.Errorf("alice's groups = %s", groups)
	}
	if err := in.DB.Transact(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `UPDATE actions SET key_owner = ? WHERE id = ?`, aliceID, own)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	q = alice.get("/approvals")
	if q.Doc.Find(`[data-testid="take-`+own+`"]`).Length() != 0 || q.Doc.Find(`[data-testid="take-`+id+`"]`).Length() != 1 {
		t.Errorf("alice's queue: Take on her own key's action %d times, on another %d times; want 0 and 1",
			q.Doc.Find(`[data-testid="take-`+own+`"]`).Length(), q.Doc.Find(`[data-testid="take-`+id+`"]`).Length())
	}
	if got := bob.get("/approvals/" + own).Doc.Find(`[data-testid="action-key-owner"]`).Text(); !strings.Contains(got, "created by Alice Approver") {
		t.Errorf("the action page names the key's owner as %q", got)
	}
	if r := alice.post("/approvals/"+own+"/take", alice.withCSRF(url.Values{}), nil); r.Status < 400 || claims() != 0 {
		t.Errorf("alice taking her own key's action = %d (%d claims), want a refusal and none", r.Status, claims())
	}
}
