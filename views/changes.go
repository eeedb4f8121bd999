package views

import (
	"encoding/json"
	"fmt"
	"slices"
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

// diffLabels name the fields of the kinds' values (changes.Threshold,
// changes.KeyRate...) in the words of the forms that set them; a field
// without one is shown by its name.
var diffLabels = map[string]string{
	"rpm": "requests a minute (0: no limit)", "tpm": "tokens a minute (0: no limit)", "on": "switched on",
	"hours": "window (hours)", "alert_percent": "alert at (% of the limit)", "base_url": "base URL",
	"upstream_key": "upstream key", "impact": "impact class", "hosts": "allowed internal hosts",
	"env": "environment", "digest": "release", "from": "from release", "surfaces": "surfaces changed",
	"by": "asked by", "failure_percent": "failure rate (%)", "p99_ms": "p99 latency (ms)",
	"window_minutes": "window (minutes)", "min_journeys": "minimum journeys",
	"accuracy_alert_below_percent": "route accuracy alert below (%)", "accuracy_alert_last_n": "over the last (labelled journeys)",
	"sample_percent": "daily sample (%)",
}

// ChangeDiff lists the fields of a change's before and after values (the
// kind's JSON), in name order; a whole tool definition is left out (its
// risk fields are shown).
func ChangeDiff(before, after json.RawMessage) []ChangeDiffRow {
	var b, a map[string]json.RawMessage
	_ = json.Unmarshal(before, &b)
	_ = json.Unmarshal(after, &a)
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []ChangeDiffRow
	_, shown := a["shown"]
	for _, k := range keys {
		// A whole tool definition is not a field people compare; where a
		// value says how it reads (shown), its raw parts are left out.
		if k == "tool" || k == "deployment" || k == "buttons" || k == "owners" || k == "key_sealed" || (shown && (k == "minor" || k == "limit_micros" || k == "set" || k == "exists")) {
			continue
		}
		bs, as := diffText(b[k]), diffText(a[k])
		label, ok := diffLabels[k]
		switch {
		case k == "shown" && a["currency"] != nil:
			label = "threshold (two approvers from)"
		case k == "shown":
			label = "limit"
		case !ok:
			label = strings.ReplaceAll(k, "_", " ")
		}
		out = append(out, ChangeDiffRow{Field: strings.ReplaceAll(k, "_", " "), Label: label, Before: bs, After: as, Changed: bs != as})
	}
	return out
}

func diffText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "—"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, fmt.Sprint(e))
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	case float64:
		return string(raw)
	}
	return string(raw)
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
