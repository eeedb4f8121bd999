package runbooks

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
)

// Two admins of all tenants: one asks to publish, the other approves.
var (
	ada = identity.Principal{ID: "p-ada", Name: "Ada", Email: "ada@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	bo  = identity.Principal{ID: "p-bo", Name: "Bo", Email: "bo@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
)

// loadPublished loads dir's runbooks and publishes their buttons the way
// the console does: ada asks (a pending runbook.publish change), bo
// approves it, and the approved change is applied (Publish) and marked
// applied. For tests whose subject is what a published button does.
func loadPublished(t *testing.T, ctx context.Context, db *store.DB, dir fstest.MapFS) *Set {
	t.Helper()
	set, problems := Load(dir)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, rb := range set.All() {
		held, err := Held(ctx, db.Read(), rb)
		if err != nil {
			t.Fatal(err)
		}
		if len(held) > 0 {
			publish(t, ctx, db, set, rb)
		}
	}
	return set
}

// publish asks (ada) and approves (bo) the publishing of rb's buttons and
// applies it; it returns the applied change.
func publish(t *testing.T, ctx context.Context, db *store.DB, set *Set, rb Runbook) changes.Change {
	t.Helper()
	pr, err := PublishProposal(ctx, db.Read(), rb)
	if err != nil {
		t.Fatal(err)
	}
	c, err := changes.Request(ctx, db, ada, pr, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c, err = changes.Decide(ctx, db, changes.Decision{Principal: bo, ChangeID: c.ID, Decision: approvals.Approve, Digest: c.PayloadDigest}, time.Now()); err != nil {
		t.Fatal(err)
	}
	after, err := changes.Value[changes.Buttons](c.After)
	if err != nil {
		t.Fatal(err)
	}
	if err := Publish(ctx, db, set, Publisher{ID: bo.ID, Name: bo.Name, Change: c.ID}, after); err != nil {
		t.Fatal(err)
	}
	if c, err = changes.MarkApplied(ctx, db, c.ID, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDigestCoversWhatAPressDoes(t *testing.T) {
	base := Action{ID: "off", Label: "Switch off", Description: "stops it", Tool: "switch_tool", Args: map[string]string{"name": "issue_refund", "state": "off"}}
	d := Digest(base)
	for _, tc := range []struct {
		name    string
		edit    func(a *Action)
		changed bool
	}{
		{"label", func(a *Action) { a.Label = "Switch on" }, true},
		{"tool", func(a *Action) { a.Tool = "switch_skill" }, true},
		{"an argument", func(a *Action) { a.Args = map[string]string{"name": "payout", "state": "off"} }, true},
		{"an added argument", func(a *Action) { a.Args = map[string]string{"name": "issue_refund", "state": "off", "tenant": "acme"} }, true},
		{"description only", func(a *Action) { a.Description = "other words" }, false},
	} {
		a := base
		tc.edit(&a)
		if got := Digest(a) != d; got != tc.changed {
			t.Errorf("%s edited: digest changed = %v, want %v", tc.name, got, tc.changed)
		}
	}
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Errorf("Digest = %q, want sha256:<64 hex>", d)
	}
}

func countRuns(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(`SELECT COUNT(*) FROM runbook_runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func loadDir(t *testing.T, files map[string]string) *Set {
	t.Helper()
	dir := fstest.MapFS{}
	for name, src := range files {
		dir[name] = &fstest.MapFile{Data: []byte(src)}
	}
	set, problems := Load(dir)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return set
}

// TestDirectoryButtonHeldUntilASecondAdminPublishes is the story
// in the domain: a directory runbook's new button is held and its press
// refused with nothing run; ada asks to publish, ada cannot approve, bo
// approves and the button runs; the file changing the button's
// arguments holds it again; removing a button needs nothing.
func TestDirectoryButtonHeldUntilASecondAdminPublishes(t *testing.T) {
	d, ctx := setupUnpublished(t)
	set := loadDir(t, map[string]string{"disk-full.md": valid})
	d.Runbooks = set
	rb, _ := set.Get("disk-full")

	held, err := Held(ctx, d.DB.Read(), rb)
	if err != nil || !strings.Contains(held["stop-refunds"], "new in disk-full.md") {
		t.Fatalf("Held = %v, %v; want stop-refunds held as new in disk-full.md", held, err)
	}
	before := auditLen(t, d.DB)
	_, err = Run(ctx, d, carol, "disk-full", "stop-refunds", "provider down", "tok-held")
	if httpStatus(err) != 409 || !strings.Contains(err.Error(), "waits for a second admin to publish") {
		t.Fatalf("press of a held button = %v, want 409 saying it waits for a second admin to publish", err)
	}
	if tool, _ := catalog.Get(ctx, d.DB.Read(), "issue_refund"); !tool.Enabled || countRuns(t, d.DB) != 0 || auditLen(t, d.DB) != before {
		t.Fatalf("after the refused press: issue_refund enabled %v, %d runs, audit grew %d; want nothing run or recorded",
			tool.Enabled, countRuns(t, d.DB), auditLen(t, d.DB)-before)
	}

	// ada asks; the change is pending and loosens; ada may not approve it.
	pr, err := PublishProposal(ctx, d.DB.Read(), rb)
	if err != nil {
		t.Fatal(err)
	}
	if loosens, err := changes.Loosens(pr.Kind, pr.Before, pr.After); err != nil || !loosens {
		t.Fatalf("publishing a new button loosens = %v, %v; want true", loosens, err)
	}
	if !strings.Contains(pr.Summary, "Switch off issue_refund") {
		t.Errorf("summary %q does not name the button", pr.Summary)
	}
	c, err := changes.Request(ctx, d.DB, ada, pr, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changes.Decide(ctx, d.DB, changes.Decision{Principal: ada, ChangeID: c.ID, Decision: approvals.Approve, Digest: c.PayloadDigest}, time.Now()); err != changes.ErrOwnRequest {
		t.Fatalf("ada approving her own publish = %v, want ErrOwnRequest", err)
	}
	if err := CheckPublished(ctx, d.DB.Read(), rb, *rb.Action("stop-refunds")); httpStatus(err) != 409 {
		t.Fatalf("while pending: CheckPublished = %v, want still held", err)
	}
	if c, err = changes.Decide(ctx, d.DB, changes.Decision{Principal: bo, ChangeID: c.ID, Decision: approvals.Approve, Digest: c.PayloadDigest}, time.Now()); err != nil {
		t.Fatal(err)
	}
	after, _ := changes.Value[changes.Buttons](c.After)
	if err := Publish(ctx, d.DB, set, Publisher{ID: bo.ID, Name: bo.Name, Change: c.ID}, after); err != nil {
		t.Fatal(err)
	}
	if held, _ := Held(ctx, d.DB.Read(), rb); len(held) != 0 {
		t.Fatalf("after publishing: held %v, want none", held)
	}
	pub, err := PublishedButtons(ctx, d.DB.Read(), "disk-full")
	if err != nil || len(pub) != 1 || pub[0].ApprovedBy != bo.ID || pub[0].ApprovedByName != "Bo" || pub[0].Change != c.ID ||
		pub[0].Digest != Digest(*rb.Action("stop-refunds")) || pub[0].Tool != "switch_tool" || pub[0].Args["name"] != "issue_refund" || pub[0].ApprovedAt.IsZero() {
		t.Fatalf("published = %+v, %v; want stop-refunds by Bo through %s with its digest", pub, err, c.ID)
	}
	run, err := Run(ctx, d, carol, "disk-full", "stop-refunds", "provider down", "tok-live")
	if err != nil || run.Status != StatusDone {
		t.Fatalf("press after publishing = %+v, %v; want done", run, err)
	}
	if tool, _ := catalog.Get(ctx, d.DB.Read(), "issue_refund"); tool.Enabled {
		t.Fatal("the published button ran, but issue_refund is still on")
	}
	if n := eventsOf(t, d.DB, "runbook.publish"); n != 1 {
		t.Errorf("runbook.publish events = %d, want 1", n)
	}

	// The file now switches off another tool: held again, as changed.
	changed := loadDir(t, map[string]string{"disk-full.md": strings.Replace(valid, "name: issue_refund", "name: payout", 1)})
	d.Runbooks = changed
	rb2, _ := changed.Get("disk-full")
	held, _ = Held(ctx, d.DB.Read(), rb2)
	if why := held["stop-refunds"]; !strings.Contains(why, "changed since it was published") || !strings.Contains(why, "name=issue_refund") {
		t.Fatalf("changed button: held %q, want it held as changed, naming what was published", why)
	}
	if _, err := Run(ctx, d, carol, "disk-full", "stop-refunds", "again", "tok-changed"); httpStatus(err) != 409 {
		t.Fatalf("press of a changed button = %v, want 409", err)
	}
	// An approval of the old definition is refused in words once the
	// file moved: the approver saw other buttons.
	if err := Publish(ctx, d.DB, changed, Publisher{ID: bo.ID}, after); httpStatus(err) != 409 || !strings.Contains(err.Error(), "changed since this was asked for") {
		t.Fatalf("publishing a definition the file no longer holds = %v, want 409 in words", err)
	}

	// Removing the button tightens: nothing is held, nothing to publish.
	head, _, _ := strings.Cut(valid, "actions:")
	removed := loadDir(t, map[string]string{"disk-full.md": head + "---\n# Disk full\n"})
	rb3, _ := removed.Get("disk-full")
	if held, err := Held(ctx, d.DB.Read(), rb3); err != nil || len(held) != 0 {
		t.Errorf("button removed: held %v, %v; want none", held, err)
	}
	if _, err := PublishProposal(ctx, d.DB.Read(), rb3); err != ErrNothingToPublish {
		t.Errorf("publishing with nothing held = %v, want ErrNothingToPublish", err)
	}
}

func TestEmbeddedButtonsNeedNoPublishing(t *testing.T) {
	d, ctx := setupUnpublished(t)
	set, _ := Load(nil)
	for _, rb := range set.All() {
		for _, a := range rb.Actions {
			if err := CheckPublished(ctx, d.DB.Read(), rb, a); err != nil {
				t.Errorf("embedded %s/%s: %v, want live without a row", rb.ID, a.ID, err)
			}
		}
	}
	// A directory file replacing a default keeps its unchanged buttons
	// live and holds the one it changed.
	src, err := defaults.ReadFile("defaults/tool-provider-outage.md")
	if err != nil {
		t.Fatal(err)
	}
	def, _ := set.Get("tool-provider-outage")
	if len(def.Actions) == 0 {
		t.Fatal("tool-provider-outage has no buttons to test with")
	}
	first := def.Actions[0]
	edited := strings.Replace(string(src), "label: "+first.Label, "label: "+first.Label+" now", 1)
	if edited == string(src) {
		t.Fatalf("could not edit the label %q in the default's file", first.Label)
	}
	mine := loadDir(t, map[string]string{"mine.md": edited})
	rb, _ := mine.Get("tool-provider-outage")
	held, err := Held(ctx, d.DB.Read(), rb)
	if err != nil || len(held) != 1 || held[first.ID] == "" {
		t.Errorf("replaced default with one label edited: held %v, %v; want only %s", held, err, first.ID)
	}
}

func auditLen(t *testing.T, db *store.DB) int {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

func eventsOf(t *testing.T, db *store.DB, verb string) int {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Verb == verb {
			n++
		}
	}
	return n
}
