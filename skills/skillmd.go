package skills

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/wardenhq/warden/platform/identity"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/yuin/goldmark/parser"
	"go.abhg.dev/goldmark/frontmatter"

	"github.com/wardenhq/warden/platform/markdown"
)

// A skill is written as a SKILL.md file (docs/skills.md): YAML front
// matter that routing and policy read, then markdown instructions.
//
//	---
//	name: refunds
//	description: Refund money for an order to the customer's account ...
//	tools: [lookup_order, issue_refund]   # the allow-list
//	max_steps: 2
//	model: gpt-small                      # optional: a model alias drives it
//	examples:                             # optional: phrasings to route by
//	  - refund ORD-1004
//	---
//	# refunds
//	Look the order up, then ...
//
// The built-in skills are embedded (builtin/NAME/SKILL.md); their
// deterministic plans stay in Go and are bound by name (builtinPlans).
// Load adds the skills of a directory, one sub-directory per skill.

//go:embed builtin/*/SKILL.md
var builtinFiles embed.FS

// SourceBuiltin is the Source of a skill embedded in the binary.
const SourceBuiltin = "built-in"

// SourceDevDemo is the Source of the development demo's model-driven
// skill: embedded, but loaded in development mode only.
const SourceDevDemo = "development demo"

// boundPlan is a skill's deterministic Go code, bound to a SKILL.md by
// the skill's name.
type boundPlan struct {
	version string // bump when plan or summary changes behaviour
	plan    func(Input) ([]Step, error)
	summary func([]StepResult) string
}

// builtinOrder is the order of the built-in skills: the router's order,
// which breaks ties in routing.
var builtinOrder = []string{"order_status", "order_support", "refunds", "customer_email"}

var builtinPlans = map[string]boundPlan{
	"order_status":   {"1", planOrderStatus, summarizeOrderStatus},
	"order_support":  {"1", planOrderSupport, summarizeOrderSupport},
	"refunds":        {"1", planRefund, summarizeRefund},
	"customer_email": {"1", planCustomerEmail, summarizeCustomerEmail},
}

// namePattern is what a skill may be called: it is also its directory's
// name and a release's skill allow-list entry.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// frontMatter is the YAML head of a SKILL.md.
type frontMatter struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Tools       []string `yaml:"tools"`
	MaxSteps    int      `yaml:"max_steps"`
	Model       string   `yaml:"model"`
	Examples    []string `yaml:"examples"`
	Owner       string   `yaml:"owner"`
	HighRisk    bool     `yaml:"high_risk"`
}

var frontMatterFields = []string{"name", "description", "tools", "max_steps", "model", "examples", "owner", "high_risk"}

// md reads a SKILL.md's front matter; body renders instructions, raw
// HTML shown as text (package markdown, as runbooks render).
var (
	md   = markdown.New(&frontmatter.Extender{})
	body = markdown.New()
)

// Parse reads one SKILL.md. The skill has no plan bound yet (see Load);
// its Hash is the SHA-256 of src, so any change to the file changes the
// release it is part of. The error says what is wrong, for the caller to
// add the file's name.
func Parse(src []byte) (Skill, error) {
	text, ok := splitFrontMatter(src)
	if !ok {
		return Skill{}, errors.New("no front matter: the file must begin with a --- line and close it with another")
	}
	ctx := parser.NewContext()
	if err := md.Convert(src, &bytes.Buffer{}, parser.WithContext(ctx)); err != nil {
		return Skill{}, fmt.Errorf("markdown: %w", err)
	}
	data := frontmatter.Get(ctx)
	if data == nil {
		return Skill{}, errors.New("no front matter: the file must begin with a --- line and close it with another")
	}
	var fields map[string]any
	if err := data.Decode(&fields); err != nil {
		return Skill{}, fmt.Errorf("front matter: %w", err)
	}
	for k := range fields {
		if !slices.Contains(frontMatterFields, k) {
			return Skill{}, fmt.Errorf("front matter: unknown field %q (known: %s)", k, strings.Join(frontMatterFields, ", "))
		}
	}
	var fm frontMatter
	if err := data.Decode(&fm); err != nil {
		return Skill{}, fmt.Errorf("front matter: %w", err)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !namePattern.MatchString(fm.Name) {
		bad("name %q is not a lower-case name such as order_status", fm.Name)
	}
	if strings.TrimSpace(fm.Description) == "" {
		bad("description is missing")
	}
	if len(fm.Tools) == 0 {
		bad("tools is missing: list the tools the skill may call")
	}
	for i, t := range fm.Tools {
		if !namePattern.MatchString(t) || slices.Contains(fm.Tools[:i], t) {
			bad("tools: %q is listed twice or is not a tool name", t)
		}
	}
	if fm.MaxSteps < 1 {
		bad("max_steps is missing or below 1")
	}
	if fm.Model != "" && strings.TrimSpace(fm.Model) != fm.Model {
		bad("model %q has surrounding spaces", fm.Model)
	}
	owner, err := identity.CheckOwner(fm.Owner)
	if err != nil {
		bad("%v", err)
	}
	if fm.HighRisk && owner == "" {
		bad("high_risk needs an owner: the person (e-mail) or group:NAME whose approval a release changing this skill needs")
	}
	if err := errors.Join(errs...); err != nil {
		return Skill{}, err
	}
	sum := sha256.Sum256(src)
	return Skill{
		Name:         fm.Name,
		Description:  strings.TrimSpace(fm.Description),
		Examples:     fm.Examples,
		Tools:        fm.Tools,
		MaxSteps:     fm.MaxSteps,
		Model:        fm.Model,
		Owner:        owner,
		HighRisk:     fm.HighRisk,
		Instructions: text,
		Hash:         hex.EncodeToString(sum[:]),
		File:         string(src),
	}, nil
}

// splitFrontMatter returns the markdown after the front matter, and
// whether there was front matter at all.
func splitFrontMatter(src []byte) (string, bool) {
	s := strings.ReplaceAll(strings.TrimPrefix(string(src), "\ufeff"), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return "", false
	}
	rest := s[len("---\n"):]
	for off := 0; off < len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if strings.TrimRight(line, " \t") == "---" {
			if end < 0 {
				return "", true
			}
			return strings.TrimLeft(rest[off+end+1:], "\n"), true
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", false
}

// bind attaches the Go plan of the same name, if Warden has one.
func bind(s *Skill) {
	if p, ok := builtinPlans[s.Name]; ok {
		s.Version, s.Plan, s.Summary = p.version, p.plan, p.summary
	}
}

// Load returns the built-in skills, then those of dir ("" for none): each
// sub-directory of dir holding a SKILL.md is one skill, named as its
// directory. A skill there with a built-in's name replaces the built-in
// (keeping its place in the routing order); the others follow, by name.
// A skill that cannot be used — malformed, or not runnable (no model and
// no built-in plan of its name) — is left out and reported, named with
// its file and the reason; the others still load.
func Load(dir string) ([]Skill, []error) {
	var problems []error
	byName := map[string]Skill{}
	for _, name := range builtinOrder {
		path := "builtin/" + name + "/SKILL.md"
		src, err := builtinFiles.ReadFile(path)
		if err == nil {
			var s Skill
			if s, err = Parse(src); err == nil {
				s.Source = SourceBuiltin
				bind(&s)
				if err = s.Validate(); err == nil {
					byName[name] = s
				}
			}
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("skill %s (embedded %s): %w", name, path, err))
		}
	}
	var extra []string
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			problems = append(problems, fmt.Errorf("skill directory %s: %w", dir, err))
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			s, err := loadFile(path, e.Name())
			if err != nil {
				problems = append(problems, fmt.Errorf("skill %s (%s): %w", e.Name(), path, err))
				continue
			}
			if _, builtin := byName[s.Name]; !builtin {
				extra = append(extra, s.Name)
			}
			byName[s.Name] = s
		}
	}
	sort.Strings(extra)
	var out []Skill
	for _, name := range append(slices.Clone(builtinOrder), extra...) {
		if s, ok := byName[name]; ok {
			out = append(out, s)
		}
	}
	return out, problems
}

func loadFile(path, dirName string) (Skill, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, errors.New("the directory has no SKILL.md")
	}
	if err != nil {
		return Skill{}, err
	}
	s, err := Parse(src)
	if err != nil {
		return Skill{}, err
	}
	if s.Name != dirName {
		return Skill{}, fmt.Errorf("name %q differs from its directory's name %q", s.Name, dirName)
	}
	s.Source = path
	bind(&s)
	return s, s.Validate()
}

// RenderInstructions renders a skill's markdown instructions as HTML, raw
// HTML escaped.
func RenderInstructions(markdown string) (string, error) {
	var out bytes.Buffer
	if err := body.Convert([]byte(markdown), &out); err != nil {
		return "", fmt.Errorf("render instructions: %w", err)
	}
	return out.String(), nil
}
