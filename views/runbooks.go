package views

import (
	"html"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/runbooks"
)

// RunbooksView is the Runbooks index.
type RunbooksView struct {
	Runbooks []runbooks.Runbook
	// Held counts the buttons each runbook holds back until a second
	// admin publishes them, by runbook id.
	Held map[string]int
}

// heldText marks a runbook with held buttons in the list.
func heldText(n int) string {
	if n == 1 {
		return "1 button waits for a second admin to publish it"
	}
	return strconv.Itoa(n) + " buttons wait for a second admin to publish them"
}

// RunbookView is one runbook: its document, its buttons after it, and its
// runs, newest first.
type RunbookView struct {
	Runbook runbooks.Runbook
	Runs    []runbooks.RunRecord
	Pager   PagerView
	// From is the alert the page was opened from, nil for none; Buttons
	// are the runbook's actions filled with its parameters.
	From    *AlertSummary
	Buttons []ProposedAction
	// MayPublish offers the Publish buttons form (an admin of all
	// tenants, and some button is held); Pending are the publish changes
	// of this runbook waiting for a second admin.
	MayPublish bool
	Pending    []changes.Change
}

// definedArgs are a button's arguments as its file defines them
// (parameters as written), for the publish list.
func (v RunbookView) definedArgs(action string) string {
	if a := v.Runbook.Action(action); a != nil {
		return runbooks.ArgsText(a.Args)
	}
	return ""
}

// held are the buttons waiting for a second admin to publish them.
func (v RunbookView) held() []ProposedAction {
	var out []ProposedAction
	for _, b := range v.Buttons {
		if b.Held != "" {
			out = append(out, b)
		}
	}
	return out
}

// buttonURL is a button's confirmation page, for the alert it was opened
// from.
func (v RunbookView) buttonURL(action string) templ.SafeURL {
	u := runbookActionURL(v.Runbook.ID, action)
	if v.From != nil {
		u += templ.SafeURL("?" + url.Values{"alert": {v.From.Alert.ID}}.Encode())
	}
	return u
}

// Body is the runbook's document without its first heading when that
// heading is the runbook's title, which the page already shows above it.
func (v RunbookView) Body() string {
	return withoutTitle(v.Runbook.HTML, v.Runbook.Title)
}

// withoutTitle is a rendered document (platform/markdown: its "# Title"
// is an h2 under the page's h1) without its first heading when that
// heading says title, which the page's h1 already shows.
func withoutTitle(doc, title string) string {
	body := strings.TrimLeft(doc, " \n")
	if rest, ok := strings.CutPrefix(body, "<h2>"); ok {
		if heading, after, ok := strings.Cut(rest, "</h2>"); ok && strings.TrimSpace(html.UnescapeString(heading)) == strings.TrimSpace(title) {
			return strings.TrimLeft(after, "\n")
		}
	}
	return doc
}

// RunbookConfirmView asks before an action runs. Token is the one-time
// idempotency key generated when the page rendered: however often the
// form is sent, one run.
type RunbookConfirmView struct {
	Runbook runbooks.Runbook
	Action  runbooks.Action
	Plan    runbooks.Plan
	Diff    *ReleaseDiff // a rollback's bundles
	Token   string
	Reason  string
	Errors  FieldErrors
	Alert   string // the alert the action's parameters came from, posted with the form
	// Bound are the values the action's parameters resolved to from the
	// alert ($tool → lookup_order): shown, and posted back with the form
	// with Seal, so the press runs exactly these or is refused.
	Bound map[string]string
	Seal  string
}

// boundNames are Bound's parameter names in order.
func (v RunbookConfirmView) boundNames() []string {
	return slices.Sorted(maps.Keys(v.Bound))
}

// RunbookResultView is the outcome of a run. Its audit event is shown on
// the page, since on-call may press the button but not open the audit
// trail; the link to the trail is offered only to those who may open it.
type RunbookResultView struct {
	Runbook runbooks.Runbook
	Run     runbooks.RunRecord
	Label   string       // the action's label, when the runbook still has it
	Event   *audit.Event // the run's runbook.action event; nil until it is written
	Names   EventNames   // what the event's ids stand for
	// AuditLink is true when the viewer may open the audit trail
	// filtered to the run's event.
	AuditLink bool
}

func runbookURL(id string) templ.SafeURL { return templ.SafeURL("/runbooks/" + url.PathEscape(id)) }

func runbookActionURL(id, action string) templ.SafeURL {
	return templ.SafeURL("/runbooks/" + url.PathEscape(id) + "/actions/" + url.PathEscape(action))
}

func runbookRunURL(id, run string) templ.SafeURL {
	return templ.SafeURL("/runbooks/" + url.PathEscape(id) + "/runs/" + url.PathEscape(run))
}

// RunAuditURL is the audit trail filtered to a run's event.
func RunAuditURL(runID string) templ.SafeURL {
	return templ.SafeURL("/audit?" + url.Values{"subject_type": {"runbook"}, "subject_id": {runID}}.Encode())
}

func (v RunbookConfirmView) confirm() ConfirmView {
	back := runbookURL(v.Runbook.ID)
	if v.Alert != "" {
		back += templ.SafeURL("?" + url.Values{"alert": {v.Alert}}.Encode())
	}
	return ConfirmView{
		Back:      back,
		BackLabel: "← " + v.Runbook.Title,
		Title:     text(v.Action.Label + "?"),
		Summary:   v.Action.Description,
		Warning:   runbookNoChange(v),
		WarningID: "runbook-no-change",
		Effect:    text(v.Plan.Summary),
		More:      runbookConfirmMore(v),
		Fields:    runbookConfirmFields(v),
		Action:    runbookActionURL(v.Runbook.ID, v.Action.ID),
		Submit:    v.Action.Label,
		SubmitID:  "runbook-submit",
		Danger:    true,
		Cancel:    back,
	}
}

func runbookNoChange(v RunbookConfirmView) templ.Component {
	if !v.Plan.NoChange {
		return nil
	}
	return text("It is already so: confirming records the press and changes nothing.")
}

func runStatusClass(status string) string {
	switch status {
	case runbooks.StatusDone:
		return "badge badge-ok"
	case runbooks.StatusFailed:
		return "badge badge-danger"
	case runbooks.StatusAwaiting:
		return "badge badge-warn"
	}
	return "badge"
}

// paramLabel names a runbook parameter for people.
func paramLabel(name string) string {
	switch name {
	case "skill":
		return "Skill"
	case "tool":
		return "Tool"
	case "tenant":
		return "Tenant"
	case "key":
		return "Key"
	}
	return name
}
