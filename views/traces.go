package views

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/tenants"
)

// TracesView is one page of journeys.
type TracesView struct {
	Journeys []journeys.Journey
	Tenants  []tenants.Tenant // in scope, for the filter
	Filter   TraceFilter
	Statuses []string
	NextPage string // older journeys, empty on the last page
	PrevPage string // newer journeys, empty on the first page
	Filtered bool   // any filter is set
	// Actions maps a journey id to the action it asked for, if any.
	Actions map[string]string
	Now     time.Time
}

// TraceFilter is the traces page's filter form.
type TraceFilter struct {
	Tenant, Status, Skill, From, To string
	// Code, Tool and Since narrow to the failing journeys an alert
	// links to: an error code, a tool one of their steps called, and a
	// moment (RFC 3339) they started at or after.
	Code, Tool, Since string
}

// TraceView is one journey with its steps.
type TraceView struct {
	Journey       journeys.Journey
	PrincipalName string // when a console user started it
	// ActionID is the high-impact action the journey asked for, when it
	// asked for one: the trace links to its decision trail.
	ActionID string
	// ModelCalls are the model calls a model-driven journey made, oldest
	// first; each was charged on its own reservation, apart from the
	// journey's cost.
	ModelCalls []models.JourneyCall
	Now        time.Time
	// Label is the route's latest label (nil when none); CanLabel shows
	// the label form (on-call and admins, with an agent runtime) with the
	// runtime's skills to choose from.
	Label       *routelabels.Label
	CanLabel    bool
	LabelSkills []string
	LabelForm   LabelForm
	Notice      string
}

// ModelCost is what the journey's model calls cost together.
func (v TraceView) ModelCost() int64 {
	var sum int64
	for _, c := range v.ModelCalls {
		sum += c.CostMicros
	}
	return sum
}

// inputSummaryLen is how many characters of a journey's input the trace
// list shows.
const inputSummaryLen = 80

// InputSummary is the start of a journey's (already redacted) input on one
// line, cut at a word boundary and never inside a redaction token such as
// "[iban:d38bf348]": a token cut in half would read as data.
func InputSummary(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= inputSummaryLen {
		return s
	}
	cut := inputSummaryLen
	// Inside a token: cut before it.
	if open := lastIndexRune(r[:cut], '['); open >= 0 && lastIndexRune(r[:cut], ']') < open {
		cut = open
	} else if sp := lastIndexRune(r[:cut], ' '); sp > inputSummaryLen/2 {
		cut = sp
	}
	return strings.TrimRight(string(r[:cut]), " ") + "…"
}

func lastIndexRune(r []rune, c rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == c {
			return i
		}
	}
	return -1
}

// ShortID shortens a long id for a narrow column, keeping its kind prefix
// and its last characters ("jrn_…9431SP"); the full id goes in the link's
// title and on the page it opens.
func ShortID(id string) string {
	prefix, rest, ok := strings.Cut(id, "_")
	if !ok || len(rest) <= 8 {
		return id
	}
	return prefix + "_…" + rest[len(rest)-6:]
}

// stepWord is a journal step's status in words ("Awaiting approval",
// "Refused"): the status vocabulary of steps ("ok", "failed", "refused",
// "awaiting_approval", and the rejected, expired or cancelled end of an
// approval step) read like every other status on the pages.
func stepWord(status string) string {
	if status == "ok" {
		return "OK"
	}
	return statusWords(status)
}

// stepKindWord is a journal step's kind in words: "Route", "Tool call",
// "Approval".
func stepKindWord(kind string) string {
	switch kind {
	case "tool":
		return "Tool call"
	case "":
		return "—"
	}
	return statusWords(kind)
}

// journeyErrorWords says in a sentence why a journey ended without
// completing; the code itself stays on the page for machines and
// searches. A code this list does not know reads as its words.
func journeyErrorWords(code string) string {
	switch code {
	case "max_steps_exceeded":
		return "Stopped: the model asked for more tool calls than the skill's max_steps allows."
	case "model_unavailable":
		return "The skill's model could not be called."
	case "tool_not_in_skill":
		return "The model asked for a tool outside the skill's allow-list."
	case "no_route":
		return "No skill matches the request."
	case "skill_disabled":
		return "The skill is switched off."
	case "skill_not_in_scope":
		return "The key may not use this skill."
	case "tool_disabled":
		return "A tool it needed is switched off."
	case "tool_not_in_scope":
		return "The key may not use a tool it needed."
	case "tool_unknown":
		return "It asked for a tool that is not in the catalog."
	case "tool_refused":
		return "A tool provider refused the call for good."
	case "tool_unavailable":
		return "A tool provider failed after every retry."
	case "dependency_unavailable":
		return "A dependency was unavailable."
	case "budget_exhausted":
		return "The tenant's budget could not cover it."
	case "tenant_frozen":
		return "The tenant is frozen."
	case "incomplete_request":
		return "The request lacks an order id."
	case "invalid_arguments":
		return "A tool's arguments did not match its schema."
	case "journey_timeout":
		return "It ran out of time."
	case "cancelled":
		return "The caller went away; it was cancelled."
	case "interrupted":
		return "Warden stopped while it ran; it was ended at start-up."
	case "internal":
		return "Warden failed internally."
	}
	w := strings.ReplaceAll(code, "_", " ")
	if w == "" {
		return ""
	}
	return strings.ToUpper(w[:1]) + w[1:] + "."
}

// A TokenRow is one token a trace shows: the token, the kind of value it
// replaced and the detector that writes that kind, and where in the
// journey it is — never the value. An admin reads it to tell a false
// positive ("Hugo Boss" as «name») and fix it with the tenant's
// allow-list.
type TokenRow struct {
	Token, Kind, Detector, Where string
}

var tokenPattern = regexp.MustCompile(`\[([a-z][a-z0-9_]*):[0-9a-f]{8}\]`)

// detectorOf names, for people, what writes a token of kind
// (docs/redaction.md §3).
var detectorOf = map[string]string{
	"name":     "name detection (a cue, a given name, the named-entity model) or a field declared personal",
	"address":  "address detection (a street line or a postcode)",
	"dob":      "date of birth (a date next to a birth cue)",
	"id":       "identity numbers (checksummed ids, or a number after an id cue)",
	"email":    "e-mail addresses, also written out",
	"phone":    "phone numbers",
	"card":     "payment cards (Luhn)",
	"iban":     "IBANs (mod 97)",
	"ssn":      "US social security numbers",
	"nino":     "UK National Insurance numbers",
	"ip":       "IP addresses",
	"secret":   "secrets (key prefixes, key names, entropy)",
	"account":  "a field named after an account",
	"personal": "a field declared personal with an unknown kind",
	"omitted":  "the length bound (text past 1 MiB)",
}

// Tokens lists the tokens in the journey's request, output and steps,
// each once, in the order they first appear.
func (v TraceView) Tokens() []TokenRow {
	var out []TokenRow
	seen := map[string]bool{}
	add := func(where, text string) {
		for _, m := range tokenPattern.FindAllStringSubmatch(text, -1) {
			if seen[m[0]] {
				continue
			}
			seen[m[0]] = true
			d := detectorOf[m[1]]
			if d == "" {
				d = "a detector or field of kind " + m[1]
			}
			out = append(out, TokenRow{Token: m[0], Kind: m[1], Detector: d, Where: where})
		}
	}
	j := v.Journey
	add("input", j.Input)
	add("correlation id", j.CorrelationID)
	for _, s := range j.Steps {
		where := fmt.Sprintf("step %d", s.N)
		add(where+" arguments", s.Arguments)
		add(where+" result", s.Result)
		add(where+" error", s.Error)
	}
	add("output", j.Output)
	return out
}
