package views

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/runbooks"
)

// ChangesView is the Changes page: loosening changes waiting for a second
// admin, and the latest decided or applied ones.
type ChangesView struct {
	Pending []changes.Change
	Recent  []changes.Change
	Now     time.Time
	// OutOfDate marks the pending changes (by id) whose object moved
	// since they were asked.
	OutOfDate map[string]bool
}

// ChangeView is one change's page.
type ChangeView struct {
	Change changes.Change
	Status string // as of now (a pending change past its expiry is expired)
	Diff   []ChangeDiffRow
	// ReleaseDiff is a release move's diff (changes.ReleaseActivate): the
	// surfaces and line diffs the Releases page shows.
	ReleaseDiff *ReleaseDiff
	// Buttons is a runbook.publish change's buttons, each marked new,
	// changed or unchanged against what was published.
	Buttons []ButtonDiffRow
	// Owners are the owners whose approval the change needs besides a
	// second admin's (a release changing a high-risk skill).
	Owners []changes.SkillOwner
	// MayDecide is set when the viewer may approve or reject it now;
	// otherwise Why says who must (the requester reads "another admin").
	MayDecide bool
	Why       string
	// OutOfDate says how a pending change's object moved since it was
	// asked ("" when it did not): it can only be rejected.
	OutOfDate string
	// MayReview offers Mark reviewed on an unreviewed break-glass change.
	MayReview bool
	Notice    string
	Errors    FieldErrors
	Comment   string
}

// ButtonDiffRow is one runbook button a runbook.publish change
// publishes (or drops): State is "new", "changed", "unchanged" or
// "removed"; Was is the published definition a changed button replaces.
type ButtonDiffRow struct {
	ID, Label, Tool, Args string
	State                 string
	Was                   string
}

// ButtonsDiff lists a runbook.publish change's buttons in the order of
// its after value, then those it drops.
func ButtonsDiff(before, after json.RawMessage) []ButtonDiffRow {
	b, _ := changes.Value[changes.Buttons](before)
	a, _ := changes.Value[changes.Buttons](after)
	var out []ButtonDiffRow
	for _, x := range a.Buttons {
		row := ButtonDiffRow{ID: x.ID, Label: x.Label, Tool: x.Tool, Args: runbooks.ArgsText(x.Args), State: "unchanged"}
		switch was := b.Find(x.ID); {
		case was == nil:
			row.State = "new"
		case was.Digest != x.Digest:
			row.State, row.Was = "changed", runbooks.Describe(*was)
		}
		out = append(out, row)
	}
	for _, x := range b.Buttons {
		if a.Find(x.ID) == nil {
			out = append(out, ButtonDiffRow{ID: x.ID, Label: x.Label, Tool: x.Tool, Args: runbooks.ArgsText(x.Args), State: "removed"})
		}
	}
	return out
}

// OwnerForm is an owner form the server refused: what was typed, and why.
type OwnerForm struct {
	Typed, Error string
}

// ChangeDiffRow is one field of a change: before and after, as text.
type ChangeDiffRow struct {
	Field, Before, After string
	// Label is the setting as the page names it ("threshold", not the
	// value's JSON name "shown").
	Label   string
	Changed bool
}

// ChangeDiff lists the fields of a change's before and after values (the
// kind's JSON), in name order, as changes.Fields names them.
func ChangeDiff(before, after json.RawMessage) []ChangeDiffRow {
	var out []ChangeDiffRow
	for _, f := range changes.Fields(before, after) {
		out = append(out, ChangeDiffRow{Field: strings.ReplaceAll(f.Key, "_", " "), Label: f.Label, Before: f.Before, After: f.After, Changed: f.Before != f.After})
	}
	return out
}

// changeStatusText is a change's status in words.
func changeStatusText(c changes.Change, status string) string {
	switch {
	case c.BreakGlass && c.ReviewedAt == nil:
		return "applied by break glass — not yet reviewed"
	case c.BreakGlass:
		return "applied by break glass — reviewed by " + c.ReviewedByName
	}
	switch status {
	case changes.Pending:
		return "waiting for a second admin"

	case changes.Applied:
		return "approved by " + c.DecidedByName + " and applied"
	case changes.Approved:
		return "approved by " + c.DecidedByName + ", being applied"
	case changes.Failed:
		return "approved by " + c.DecidedByName + ", but applying it failed: " + c.Failure
	case changes.Rejected:
		return "rejected by " + c.DecidedByName
	case changes.Expired:
		return "expired: no second admin decided it in time"
	}
	return status
}

func changePath(c changes.Change) string { return "/changes/" + c.ID }
