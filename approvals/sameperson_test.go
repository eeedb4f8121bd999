package approvals

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// signIn records a sign-in of (issuer, subject) with email, as
// signin.Login does, and returns the principal as its session holds it.
func (f fixture) signIn(t *testing.T, issuer, subject, email string) identity.Principal {
	t.Helper()
	p := identity.Principal{Issuer: issuer, Subject: subject, Name: subject, Email: email,
		Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		p.ID, err = principals.Upsert(context.Background(), tx, principals.Principal{
			Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, Roles: p.Roles, Tenants: p.Tenants})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// One person signed in through two issuers is two principals with one
// e-mail: their second approval of a two-approver action is refused, with
// a sentence naming the e-mail, and nothing is recorded. Two people with
// different e-mails both count.
func TestSameEmailThroughAnotherIssuerIsNotASecondApprover(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	aliceA := f.signIn(t, "http://127.0.0.1:8080/dev-idp", "dev-alice", "alice@example.com")
	aliceB := f.signIn(t, "http://127.0.0.1:8081/dev-idp", "dev-alice", "Alice@Example.com")
	bobB := f.signIn(t, "http://127.0.0.1:8081/dev-idp", "dev-bob", "bob@example.com")
	if aliceA.ID == aliceB.ID {
		t.Fatal("two issuers gave one principal")
	}
	a := f.newAction(t, 1, 2)
	approve := func(p identity.Principal) (Result, error) {
		return Decide(ctx, f.db, Request{Principal: p, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, nil, time.Now())
	}
	if _, err := approve(aliceA); err != nil {
		t.Fatalf("first approval: %v", err)
	}
	_, err := approve(aliceB)
	if !errors.Is(err, ErrSameEmail) {
		t.Fatalf("alice through the other issuer = %v, want ErrSameEmail", err)
	}
	want := "You already approved this action as alice@example.com signed in through another issuer; a second approver must be someone else."
	if msg := err.Error(); !strings.Contains(msg, want) {
		t.Errorf("refusal = %q, want %q", msg, want)
	}
	if got, _ := Get(ctx, f.db.Read(), a.ID); got.Status != StatusPending || got.ApprovalsGiven != 1 {
		t.Fatalf("after the refusal: %s, %d given; want pending, 1", got.Status, got.ApprovalsGiven)
	}
	if ds, _ := Decisions(ctx, f.db.Read(), a.ID); len(ds) != 1 {
		t.Fatalf("%d decisions recorded, want 1", len(ds))
	}
	r, err := approve(bobB)
	if err != nil || r.Action.Status != StatusApproved || r.Action.ApprovalsGiven != 2 {
		t.Fatalf("bob = %+v, %v; want approved, 2 of 2", r.Action, err)
	}
	got, err := Approvers(ctx, f.db.Read(), a.ID)
	if err != nil || len(got) != 2 {
		t.Fatalf("Approvers = %+v, %v", got, err)
	}
	byID := map[string]Approver{got[0].ID: got[0], got[1].ID: got[1]}
	if byID[aliceA.ID] != (Approver{ID: aliceA.ID, Issuer: aliceA.Issuer, Email: aliceA.Email}) ||
		byID[bobB.ID] != (Approver{ID: bobB.ID, Issuer: bobB.Issuer, Email: bobB.Email}) {
		t.Errorf("Approvers = %+v", got)
	}
}
