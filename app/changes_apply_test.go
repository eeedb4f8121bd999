package app

import (
	"context"
	"encoding/json"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/runbooks"
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
