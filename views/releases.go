package views

import (
	"net/url"
	"strconv"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/textdiff"
	"github.com/wardenhq/warden/releases"
)

// ReleasesView is the Releases page for one agent in one environment.
type ReleasesView struct {
	Targets []releases.Target
	Agent   string
	Env     string
	Active  *releases.Published // nil when none was ever activated
	History []releases.Pointer  // a page of the pointer's history, newest first
	Pager   PagerView
	Notice  string
	// Digests are the bundles this pointer ran, for the diff form.
	Digests []string
	Diff    *ReleaseDiff // when two bundles were chosen
	// Canary is the running canary's verdict (nil when none runs);
	// Candidates are the published bundles a canary may start with.
	Canary     *releases.Verdict
	Candidates []string
	// CanaryGoverned are the surfaces the canary's candidate changes
	// that make promoting it wait for a second admin (none: it applies
	// at once).
	CanaryGoverned []string
	CanaryForm     CanaryForm
	// Skills are the skills whose journeys a candidate may be replayed
	// over (none without an agent runtime: no Replay form). Replays are
	// the newest kept replays; CanaryReplay is the newest replay of the
	// running canary's candidate made before it started (nil when none).
	Skills       []string
	Replays      []releases.Replay
	CanaryReplay *releases.Replay
	// Accuracy is route accuracy from people's labels (nil without an
	// agent runtime).
	Accuracy *RouteAccuracyView
	// CanPublish shows the publish form (admins).
	CanPublish bool
	Publish    PublishForm
}

// PublishForm is the "Publish a release" form as the user filled it in.
type PublishForm struct {
	Bundle, Note string
	Errors       FieldErrors
}

// ReplayRateOf is a kept replay's route agreement rate as people read it.
func ReplayRateOf(r releases.Replay) string {
	if r.Replayed == 0 {
		return "none"
	}
	return strconv.FormatFloat(r.Rate()*100, 'f', 1, 64) + " %"
}

func replayURL(id string) templ.SafeURL {
	return templ.SafeURL("/releases/replays/" + url.PathEscape(id))
}

// ReplayRate is a replay's route agreement rate as people read it.
func ReplayRate(r journeys.ReplayReport) string {
	if len(r.Rows) == 0 {
		return "none"
	}
	return strconv.FormatFloat(r.Rate*100, 'f', 1, 64) + " %"
}

func replayRoute(skill string) string {
	if skill == "" {
		return "no route"
	}
	return skill
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// CanaryForm is the "Start a canary" form as the user filled it in.
type CanaryForm struct {
	Candidate, Share, Floor, Reason string
	RequireLabels                   bool
	Errors                          FieldErrors
}

// LabelRate is a replay's accuracy on labelled journeys as people read it.
func LabelRate(right, labelled int) string {
	if labelled == 0 {
		return "no labelled journeys"
	}
	return strconv.FormatFloat(float64(right)*100/float64(labelled), 'f', 1, 64) + " % (" + strconv.Itoa(right) + " of " + strconv.Itoa(labelled) + ")"
}

// LowerBound is the verdict's Wilson lower bound as people read it.
func LowerBound(v releases.Verdict) string { return strconv.FormatFloat(v.LowerBound, 'f', 3, 64) }

// Floor is a canary floor as people read it.
func Floor(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// ReleaseDiff compares two bundles surface by surface.
type ReleaseDiff struct {
	From, To releases.Published
	Changed  []string // releases.Diff
	// Texts are the line diffs of the changed texts Warden holds: the
	// prompt, routing policy and other surface contents, and each skill
	// file (releases.TextDiffs).
	Texts []releases.TextDiff
}

// diffCounts is a text diff's size as a review shows it: "+3 −1".
func diffCounts(d releases.TextDiff) string {
	added, removed := textdiff.Count(d.Lines)
	return "+" + strconv.Itoa(added) + " −" + strconv.Itoa(removed)
}

// lineNumber is a line's number on one side, "" where it is not there.
func lineNumber(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// skippedLines says how many unchanged lines a fold hides.
func skippedLines(n int) string {
	if n == 1 {
		return "⋯ 1 unchanged line"
	}
	return "⋯ " + strconv.Itoa(n) + " unchanged lines"
}

// Surface is the identifier b gives surface s.
func Surface(b releases.Bundle, s string) string { return surfaceMap(b)[s] }

// Rows are every surface with both identifiers and whether it changed.
func (d ReleaseDiff) Rows() []DiffRow {
	changed := map[string]bool{}
	for _, s := range d.Changed {
		changed[s] = true
	}
	var out []DiffRow
	from, to := surfaceMap(d.From.Bundle), surfaceMap(d.To.Bundle)
	for _, s := range releases.Surfaces {
		out = append(out, DiffRow{Surface: s, From: from[s], To: to[s], Changed: changed[s]})
	}
	return out
}

// DiffRow is one surface of a diff.
type DiffRow struct {
	Surface, From, To string
	Changed           bool
}

func surfaceMap(b releases.Bundle) map[string]string {
	return map[string]string{"model": b.Model, "prompt": b.Prompt, "tools": b.Tools, "routing": b.Routing,
		"approval": b.Approval, "skills": b.Skills}
}

// ReleaseSwitchView asks before moving a pointer: rolling back to an
// earlier release (Kind releases.KindRolledBack) or activating a
// published one (releases.KindActivated).
type ReleaseSwitchView struct {
	Kind       string
	Agent, Env string
	From       string // the release active when the page was shown (releases.NoneActive)
	Target     releases.Published
	Diff       ReleaseDiff // from the active release to the target
	Published  bool        // the target was published just now
	// Governed are the changed surfaces that make this move wait for a
	// second admin (docs/changes.md); none for a rollback to an earlier
	// release or a model-only change.
	Governed []string
	Reason   string
	Errors   FieldErrors
}

func (v ReleaseSwitchView) activate() bool { return v.Kind == releases.KindActivated }

func releasesURL(agent, env string) templ.SafeURL {
	return templ.SafeURL("/releases?" + url.Values{"agent": {agent}, "env": {env}}.Encode())
}

func rollbackURL(agent, env, digest string) templ.SafeURL {
	return templ.SafeURL("/releases/rollback?" + url.Values{"agent": {agent}, "env": {env}, "digest": {digest}}.Encode())
}

// ShortDigest is a digest's first 12 hex digits, enough to tell releases
// apart on a page; the full digest is in its title.
func ShortDigest(d string) string {
	const prefix = len("sha256:")
	if len(d) < prefix+12 {
		return d
	}
	return d[prefix : prefix+12]
}

func diffPhrase(changed []string) string {
	if len(changed) == 0 {
		return "The two releases are identical."
	}
	s := ""
	for i, c := range changed {
		switch {
		case i == 0:
		case i == len(changed)-1:
			s += " and "
		default:
			s += ", "
		}
		s += c
	}
	return "Changed: " + s + "."
}

func (v ReleaseSwitchView) confirm() ConfirmView {
	c := ConfirmView{
		Back:      releasesURL(v.Agent, v.Env),
		BackLabel: "← Releases",
		Title:     text("Roll " + v.Agent + " in " + v.Env + " back to release " + ShortDigest(v.Target.Digest) + "?"),
		Summary:   v.Target.Note,
		Effect:    switchEffect(v),
		More:      switchMore(v),
		Fields:    switchFields(v),
		Action:    "/releases/rollback",
		Submit:    "Roll back",
		SubmitID:  "rollback-submit",
		Danger:    true,
		Cancel:    releasesURL(v.Agent, v.Env),
	}
	if v.activate() {
		c.Title = text("Activate release " + ShortDigest(v.Target.Digest) + " for " + v.Agent + " in " + v.Env + "?")
		c.Action, c.Submit, c.SubmitID, c.Danger = "/releases/activate", "Activate", "activate-submit", false
	}
	return c
}

func kindLabel(kind string) string {
	switch kind {
	case releases.KindRolledBack:
		return "rolled back"
	case releases.KindCanaryStarted:
		return "canary started"
	case releases.KindCanaryRolledBack:
		return "canary rolled back"
	}
	return kind
}
