package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/tenants"
)

const dirRunbook = `---
id: pause-refunds
title: Pause refunds
owner: payments-oncall
severity: high
actions:
  - id: stop-refunds
    label: Switch off issue_refund
    tool: switch_tool
    args: {name: issue_refund, state: "off"}
---
# Pause refunds
`

// TestApplyJobPublishesRunbookButtons: an approved runbook.publish change
// whose approver's request died is applied by the apply job once the
// console gave the runtime its runbooks; before that the job fails (and
// is retried) without marking the change, and the button stays held.
func TestApplyJobPublishesRunbookButtons(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	set, problems := runbooks.Load(fstest.MapFS{"pause-refunds.md": {Data: []byte(dirRunbook)}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	rb, _ := set.Get("pause-refunds")
	pr, err := runbooks.PublishProposal(ctx, db.Read(), rb)
	if err != nil {
		t.Fatal(err)
	}
	erin := identity.Principal{ID: "p-erin", Name: "Erin", Email: "erin@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	frank := identity.Principal{ID: "p-frank", Name: "Frank", Email: "frank@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	c, err := changes.Request(ctx, db, erin, pr, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c, err = changes.Decide(ctx, db, changes.Decision{Principal: frank, ChangeID: c.ID, Decision: approvals.Approve, Digest: c.PayloadDigest}, time.Now()); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(changes.ApplyJob{Change: c.ID})
	job := jobs.Job{Kind: changes.JobApply, Payload: payload}

	noRunbooks := &ChangeApplier{DB: db}
	if err := noRunbooks.HandleJob(ctx, job); err == nil {
		t.Fatal("the apply job without the runbooks loaded succeeded")
	}
	if got, _ := changes.Get(ctx, db.Read(), c.ID); got.Status != changes.Approved {
		t.Fatalf("after the job without runbooks the change is %s, want still approved (retried)", got.Status)
	}
	a := &ChangeApplier{DB: db, Runbooks: set}
	if err := a.HandleJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	got, _ := changes.Get(ctx, db.Read(), c.ID)
	if got.Status != changes.Applied {
		t.Fatalf("change %s: %s (%s), want applied", c.ID, got.Status, got.Failure)
	}
	pub, err := runbooks.PublishedButtons(ctx, db.Read(), "pause-refunds")
	if err != nil || len(pub) != 1 || pub[0].ApprovedBy != frank.ID || pub[0].ApprovedByName != "Frank" || pub[0].Change != c.ID {
		t.Fatalf("published = %+v, %v; want stop-refunds approved by Frank in %s", pub, err, c.ID)
	}
	if err := runbooks.CheckPublished(ctx, db.Read(), rb, *rb.Action("stop-refunds")); err != nil {
		t.Errorf("after the job: %v, want the button live", err)
	}
}

// TestDecisionChecksTheObjectAndTheApplyStillDoes: with the apply code's
// Check, an approval is refused (409, the change still pending) once the
// threshold moved since the change was asked; an approval recorded while
// it had not moved, followed by a move before the apply (the approver's
// request died, the job applies later), still fails instead of undoing
// the move.
func TestDecisionChecksTheObjectAndTheApplyStillDoes(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var acme tenants.Tenant
	if err := db.Transact(ctx, func(tx *store.Tx) (err error) { acme, err = tenants.Insert(ctx, tx, "acme", "Acme"); return err }); err != nil {
		t.Fatal(err)
	}
	actor := audit.Actor{Type: audit.ActorSystem, ID: "test"}
	set := func(minor int64) {
		t.Helper()
		if _, err := tenants.SetThreshold(ctx, db, actor, acme.ID, tenants.Threshold{Currency: "USD", Minor: minor}); err != nil {
			t.Fatal(err)
		}
	}
	set(100_000)
	erin := identity.Principal{ID: "p-erin", Name: "Erin", Email: "erin@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	frank := identity.Principal{ID: "p-frank", Name: "Frank", Email: "frank@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	a := &ChangeApplier{DB: db}
	ask := func() changes.Change {
		t.Helper()
		before := changes.Threshold{Currency: "USD", Set: true, Minor: 100_000}
		after := changes.Threshold{Currency: "USD", Set: true, Minor: 100_000_000}
		before.Shown, after.Shown = before.Text(), after.Text()
		c, err := changes.Request(ctx, db, erin, changes.Proposal{Kind: changes.DualControl, TenantID: acme.ID, TenantSlug: "acme",
			Subject: "acme", Summary: "Raise", Before: before, After: after}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	approve := func(c changes.Change) (changes.Change, error) {
		return changes.Decide(ctx, db, changes.Decision{Principal: frank, ChangeID: c.ID, Decision: approvals.Approve,
			Digest: c.PayloadDigest, Check: a.Check}, time.Now())
	}
	threshold := func() int64 { m, _ := tenants.ThresholdFor(ctx, db.Read(), acme.ID, "USD"); return m }

	c := ask()
	set(50_000)
	_, err := approve(c)
	if p := problem.From(err); err == nil || p.Kind != problem.KindConflict || p.Code != "changed_since_asked" ||
		p.Message != "This dual-control threshold changed since the change was asked: it was threshold (two approvers from): $1,000.00 and is now threshold (two approvers from): $500.00. Reject this change and ask again." {
		t.Fatalf("approving after the threshold moved: %v, want 409 changed_since_asked", err)
	}
	if got, _ := changes.Get(ctx, db.Read(), c.ID); got.Status != changes.Pending || threshold() != 50_000 {
		t.Errorf("after the refusal the change is %s and the threshold %d; want pending and 50000", got.Status, threshold())
	}
	refusals := func() []audit.Event {
		t.Helper()
		evs, err := audit.List(ctx, db.Read(), audit.Filter{Limit: audit.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		var out []audit.Event
		for _, e := range evs {
			if e.Verb == "change.approval_refused" {
				out = append(out, e)
			}
		}
		return out
	}
	if evs := refusals(); len(evs) != 1 || evs[0].Actor.ID != frank.ID || evs[0].Subject.ID != c.ID || evs[0].Tenant != "acme" ||
		evs[0].Details["reason"] != "changed_since_asked" || evs[0].Details["kind"] != changes.DualControl || evs[0].Details["after"] != nil {
		t.Errorf("refused approval events = %+v; want one by %s on %s, reason changed_since_asked, no values", evs, frank.ID, c.ID)
	}
	// The requester's own approval is refused as approvals refuse it:
	// nothing recorded (only the object moving is audited).
	if _, err := changes.Decide(ctx, db, changes.Decision{Principal: erin, ChangeID: c.ID, Decision: approvals.Approve,
		Digest: c.PayloadDigest, Check: a.Check}, time.Now()); err != changes.ErrOwnRequest {
		t.Errorf("the requester approving: %v, want ErrOwnRequest", err)
	}
	if n := len(refusals()); n != 1 {
		t.Errorf("refused approval events after the requester's own approval = %d, want still 1", n)
	}

	set(100_000)
	c = ask()
	if c, err = approve(c); err != nil || c.Status != changes.Approved {
		t.Fatalf("approving while nothing moved: %s, %v", c.Status, err)
	}
	set(50_000) // between the decision and the apply
	got, err := a.ApplyApproved(ctx, c)
	if err != nil || got.Status != changes.Failed || !strings.Contains(got.Failure, "changed since") || threshold() != 50_000 {
		t.Errorf("applying after a move: %s %q (%v), threshold %d; want failed and 50000 kept", got.Status, got.Failure, err, threshold())
	}
}
