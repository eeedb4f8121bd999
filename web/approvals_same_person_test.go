package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// Alice approved the two-approver refund under an earlier issuer (another
// principal, her e-mail); signed in through today's she is not offered a
// second approval, the action page says why, and forcing it records
// nothing.
func TestSamePersonThroughAnotherIssuerIsNotTheSecondApprover(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	ctx := context.Background()
	desk := pendingAction(t, in, "ORD-1004")

	earlier := identity.Principal{Issuer: "http://127.0.0.1:8081/dev-idp", Subject: "dev-alice", Name: "Alice Approver",
		Email: "alice@example.com", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		earlier.ID, err = principals.Upsert(ctx, tx, principals.Principal{Issuer: earlier.Issuer, Subject: earlier.Subject,
			Email: earlier.Email, Name: earlier.Name, Roles: earlier.Roles, Tenants: earlier.Tenants})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approvals.Decide(ctx, in.DB, approvals.Request{Principal: earlier, ActionID: desk.ID, Decision: approvals.Approve,
		Digest: desk.PayloadDigest}, nil, time.Now()); err != nil {
		t.Fatalf("the earlier approval: %v", err)
	}

	want := "You already approved this action as alice@example.com signed in through another issuer; a second approver must be someone else."
	p := alice.get("/approvals/" + desk.ID)
	if text(p, "action-approvals") != "1 of 2" {
		t.Errorf("approvals = %q, want 1 of 2", text(p, "action-approvals"))
	}
	if p.Doc.Find(`[data-testid="approve-form"]`).Length() != 0 || text(p, "decide-blocked") != want {
		t.Errorf("alice under a second issuer is offered the approval, or told %q; want %q", text(p, "decide-blocked"), want)
	}
	p = alice.post("/approvals/"+desk.ID+"/decide", alice.withCSRF(decideForm(approvals.Approve, "", desk.PayloadDigest)), nil)
	if p.Status != http.StatusConflict || !strings.Contains(text(p, "conflict-message"), want) {
		t.Errorf("forced approval = %d %q, want 409 with %q", p.Status, text(p, "conflict-message"), want)
	}
	if n := decisionCount(t, in, desk.ID); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
	if a := getAction(t, in, desk.ID); a.Status != approvals.StatusPending {
		t.Fatalf("status %s, want pending", a.Status)
	}
}
