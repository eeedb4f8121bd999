// Package runbooks holds the runbooks on-call follows in an incident:
// markdown documents whose front matter lists the buttons (actions) the
// document offers, each naming one operational tool and its arguments
// (docs/runbooks.md). The defaults are embedded in the binary; a directory
// (WARDEN_RUNBOOK_DIR) adds more or replaces a default by id.
//
//	set, problems := runbooks.Load(os.DirFS(dir)) // dir "" loads the defaults only
//	for _, err := range problems { log.Warn("runbook skipped", "error", err) }
//	rb, ok := set.Get("bad-release-rollback")
//	plan, err := runbooks.PlanAction(ctx, deps, rb.Action("rollback")) // what pressing changes
//	run, err := runbooks.Run(ctx, deps, principal, rb.ID, "rollback", reason, token)
//
// Run is the one way an action takes effect: it checks the principal,
// runs the tool once per token and records the run with its audit event.
package runbooks

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/yuin/goldmark/parser"
	"go.abhg.dev/goldmark/frontmatter"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/platform/markdown"
)

//go:embed defaults/*.md
var defaults embed.FS

// Severities a runbook may declare, most urgent first.
var Severities = []string{"critical", "high", "medium", "low"}

// Runbook is one parsed document.
type Runbook struct {
	ID       string `yaml:"id"`
	Title    string `yaml:"title"`
	Owner    string `yaml:"owner"`
	Severity string `yaml:"severity"`
	// Alerts are the kinds of alert (alerts.Kinds) this runbook handles;
	// Causes and Subjects narrow it to alerts whose failures are mostly
	// of that fault (alerts.FaultAgent, alerts.FaultWarden) or about those
	// skills or tenants. The alert page proposes the most specific (For).
	Alerts   []string `yaml:"alerts"`
	Causes   []string `yaml:"causes"`
	Subjects []string `yaml:"subjects"`
	Actions  []Action `yaml:"actions"`
	// HTML is the document body rendered by goldmark, raw HTML escaped:
	// safe to put in a page as it is.
	HTML string `yaml:"-"`
	// Source names where it came from: "embedded:NAME" or the file name.
	Source string `yaml:"-"`
}

// Action is one button of a runbook.
type Action struct {
	ID          string            `yaml:"id"`
	Label       string            `yaml:"label"`
	Description string            `yaml:"description"`
	Tool        string            `yaml:"tool"`
	Args        map[string]string `yaml:"args"`
}

// Parameters an action's argument may name instead of a value ("$tool"),
// filled from the alert the runbook was opened from (alerts.Cause.Params):
// the skill it is about, the tool and tenant most of its failures came
// from, the key that sent most of them.
var Parameters = []string{"skill", "tool", "tenant", "key"}

// param is the parameter a value names ("$tool" → "tool"), or "".
func param(v string) string {
	if name, ok := strings.CutPrefix(strings.TrimSpace(v), "$"); ok {
		return name
	}
	return ""
}

// Needs lists the parameters the action's arguments name, sorted.
func (a Action) Needs() []string {
	var out []string
	for _, v := range a.Args {
		if p := param(v); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Fill returns the action with its parameters replaced by their values
// in params, in its arguments, label and description; missing lists the
// parameters params lacks (then the action cannot be pressed).
func (a Action) Fill(params map[string]string) (filled Action, missing []string) {
	filled = a
	filled.Args = make(map[string]string, len(a.Args))
	for k, v := range a.Args {
		if p := param(v); p != "" {
			if params[p] == "" {
				if !slices.Contains(missing, p) {
					missing = append(missing, p)
				}
			} else {
				v = params[p]
			}
		}
		filled.Args[k] = v
	}
	sort.Strings(missing)
	for _, p := range Parameters {
		if params[p] != "" {
			filled.Label = strings.ReplaceAll(filled.Label, "$"+p, params[p])
			filled.Description = strings.ReplaceAll(filled.Description, "$"+p, params[p])
		}
	}
	return filled, missing
}

// Action finds the action with id, or nil.
func (r Runbook) Action(id string) *Action {
	for i := range r.Actions {
		if r.Actions[i].ID == id {
			return &r.Actions[i]
		}
	}
	return nil
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// md renders runbook bodies; raw HTML shows as text (package markdown),
// so a "<script>" in a runbook reads as text.
var md = markdown.New(&frontmatter.Extender{})

// Parse reads one document: YAML front matter between "---" lines, then
// markdown. The error says what is wrong, for the file name to be added.
func Parse(src []byte) (Runbook, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(src, "\ufeff"), []byte("---")) {
		return Runbook{}, errors.New("no front matter: the file must begin with a --- line")
	}
	ctx := parser.NewContext()
	var out bytes.Buffer
	if err := md.Convert(src, &out, parser.WithContext(ctx)); err != nil {
		return Runbook{}, fmt.Errorf("markdown: %w", err)
	}
	data := frontmatter.Get(ctx)
	if data == nil {
		return Runbook{}, errors.New("no front matter: the file must begin with a --- line")
	}
	var rb Runbook
	if err := data.Decode(&rb); err != nil {
		return Runbook{}, fmt.Errorf("front matter: %w", err)
	}
	if err := rb.validate(); err != nil {
		return Runbook{}, err
	}
	rb.HTML = out.String()
	return rb, nil
}

func (r Runbook) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !idPattern.MatchString(r.ID) {
		bad("id %q is not a lower-case name such as bad-release-rollback", r.ID)
	}
	if strings.TrimSpace(r.Title) == "" {
		bad("title is missing")
	}
	if strings.TrimSpace(r.Owner) == "" {
		bad("owner is missing")
	}
	if !slices.Contains(Severities, r.Severity) {
		bad("severity %q is not one of %s", r.Severity, strings.Join(Severities, ", "))
	}
	for _, k := range r.Alerts {
		if !slices.Contains(alerts.Kinds, k) {
			bad("alerts: %q is not a kind of alert (%s)", k, strings.Join(alerts.Kinds, ", "))
		}
	}
	for _, c := range r.Causes {
		if c != alerts.FaultAgent && c != alerts.FaultWarden {
			bad("causes: %q is neither %s nor %s", c, alerts.FaultAgent, alerts.FaultWarden)
		}
	}
	if (len(r.Causes) > 0 || len(r.Subjects) > 0) && len(r.Alerts) == 0 {
		bad("causes and subjects narrow the alerts a runbook handles, so it must name them")
	}
	seen := map[string]bool{}
	for i, a := range r.Actions {
		where := fmt.Sprintf("action %d", i+1)
		if a.ID != "" {
			where = fmt.Sprintf("action %q", a.ID)
		}
		switch {
		case !idPattern.MatchString(a.ID):
			bad("%s: id %q is not a lower-case name such as roll-back", where, a.ID)
		case seen[a.ID]:
			bad("%s: the id is used twice", where)
		}
		seen[a.ID] = true
		if strings.TrimSpace(a.Label) == "" {
			bad("%s: label is missing", where)
		}
		if err := checkArgs(a.Tool, a.Args); err != nil {
			bad("%s: %v", where, err)
		}
	}
	return errors.Join(errs...)
}

// Set is the loaded runbooks, ordered by severity then title.
type Set struct {
	list []Runbook
}

// All lists the runbooks, most severe first.
func (s *Set) All() []Runbook {
	if s == nil {
		return nil
	}
	return s.list
}

// Get finds a runbook by id.
func (s *Set) Get(id string) (Runbook, bool) {
	for _, r := range s.All() {
		if r.ID == id {
			return r, true
		}
	}
	return Runbook{}, false
}

// For is the runbook to propose for an alert of kind about subject whose
// failures are mostly fault ("" when unknown): among the runbooks naming
// the kind, one naming the subject wins over one naming the fault, which
// wins over one naming neither; a runbook naming subjects or causes that
// do not match is not proposed. Ties go to the more severe, then by title.
func (s *Set) For(kind, subject, fault string) (Runbook, bool) {
	best, score := Runbook{}, -1
	for _, r := range s.All() {
		if !slices.Contains(r.Alerts, kind) {
			continue
		}
		n := 0
		if len(r.Subjects) > 0 {
			if !slices.Contains(r.Subjects, subject) {
				continue
			}
			n += 2
		}
		if len(r.Causes) > 0 {
			if !slices.Contains(r.Causes, fault) {
				continue
			}
			n++
		}
		if n > score { // All is in severity order: the first of a score stays
			best, score = r, n
		}
	}
	return best, score >= 0
}

// Load reads the embedded defaults, then every *.md file at the top of dir
// (nil for none). A file there with a default's id replaces the default. A
// file that cannot be used is left out and reported, named, with the
// reason; the others still load.
func Load(dir fs.FS) (*Set, []error) {
	byID := map[string]Runbook{}
	var problems []error
	read := func(fsys fs.FS, prefix string, replace bool) {
		names, err := fs.Glob(fsys, "*.md")
		if err != nil {
			problems = append(problems, fmt.Errorf("runbook directory: %w", err))
			return
		}
		fromHere := map[string]string{}
		for _, name := range names {
			src, err := fs.ReadFile(fsys, name)
			if err == nil {
				var rb Runbook
				if rb, err = Parse(src); err == nil {
					rb.Source = prefix + name
					if other, dup := fromHere[rb.ID]; dup {
						err = fmt.Errorf("id %q is already used by %s", rb.ID, other)
					} else if _, exists := byID[rb.ID]; exists && !replace {
						err = fmt.Errorf("id %q is already used", rb.ID)
					} else {
						fromHere[rb.ID] = name
						byID[rb.ID] = rb
					}
				}
			}
			if err != nil {
				problems = append(problems, fmt.Errorf("runbook %s: %w", prefix+name, err))
			}
		}
	}
	sub, _ := fs.Sub(defaults, "defaults")
	read(sub, "embedded:", false)
	if dir != nil {
		read(dir, "", true)
	}
	s := &Set{}
	for _, rb := range byID {
		s.list = append(s.list, rb)
	}
	sort.Slice(s.list, func(i, j int) bool {
		a, b := s.list[i], s.list[j]
		if sa, sb := slices.Index(Severities, a.Severity), slices.Index(Severities, b.Severity); sa != sb {
			return sa < sb
		}
		return a.Title < b.Title
	})
	return s, problems
}
