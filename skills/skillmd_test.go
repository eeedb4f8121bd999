package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSkill writes dir/name/SKILL.md.
func writeSkill(t *testing.T, dir, name, src string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name, "SKILL.md")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The built-in skills are their embedded SKILL.md files: routing reads
// their front matter, each carries the hash of its file, and its Go plan
// is bound by name.
func TestBuiltinSkillsAreTheirSkillFiles(t *testing.T) {
	got := Demo()
	if names := func() (n []string) {
		for _, s := range got {
			n = append(n, s.Name)
		}
		return
	}(); !slices.Equal(names, []string{"order_status", "order_support", "refunds", "customer_email"}) {
		t.Fatalf("Demo() names = %v", names)
	}
	for _, s := range got {
		src, err := builtinFiles.ReadFile("builtin/" + s.Name + "/SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		sum := sha256.Sum256(src)
		if s.Hash != hex.EncodeToString(sum[:]) || s.Source != SourceBuiltin || s.Plan == nil || s.Version != "1" {
			t.Errorf("%s: hash %q source %q plan %v version %q; want the file's SHA-256, built-in, a plan, version 1",
				s.Name, s.Hash, s.Source, s.Plan != nil, s.Version)
		}
		if s.Description != want.Description || !slices.Equal(s.Examples, want.Examples) ||
			!slices.Equal(s.Tools, want.Tools) || s.MaxSteps != want.MaxSteps || s.Model != "" {
			t.Errorf("%s: skill differs from its SKILL.md front matter", s.Name)
		}
		if !strings.HasPrefix(s.Instructions, "# "+s.Name) {
			t.Errorf("%s: instructions = %q, want the markdown body", s.Name, s.Instructions)
		}
	}
}

const refundsOverride = `---
name: refunds
description: Refund money for a frobnicated order.
tools: [lookup_order, issue_refund]
max_steps: 2
examples:
  - frobnicate the widget
---
# Refunds, our way
`

// A skill directory adds skills and replaces a built-in of the same name;
// a malformed file is named with its reason and the others still load.
func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	over := writeSkill(t, dir, "refunds", refundsOverride)
	bad := writeSkill(t, dir, "broken", "---\nname: broken\ndescription: [unclosed\n---\nbody\n")
	noFM := writeSkill(t, dir, "plain", "# just markdown\n")
	typo := writeSkill(t, dir, "typo", "---\nname: typo\ndescription: d\ntools: [lookup_order]\nmax-steps: 1\n---\n")
	wrongName := writeSkill(t, dir, "elsewhere", "---\nname: other\ndescription: d\ntools: [lookup_order]\nmax_steps: 1\n---\n")
	noPlan := writeSkill(t, dir, "warranty", "---\nname: warranty\ndescription: Warranty claims.\ntools: [lookup_order]\nmax_steps: 1\n---\n")
	withModel := writeSkill(t, dir, "triage", "---\nname: triage\ndescription: Triage.\ntools: [lookup_order]\nmax_steps: 3\nmodel: small\n---\n")
	missingFields := writeSkill(t, dir, "empty", "---\nname: empty\n---\n")
	if err := os.MkdirAll(filepath.Join(dir, "nofile"), 0o755); err != nil {
		t.Fatal(err)
	}

	got, problems := Load(dir)
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"order_status", "order_support", "refunds", "customer_email", "triage"}) {
		t.Errorf("loaded %v, want the built-ins with refunds replaced in place, then the model-driven triage", names)
	}
	if tr := got[4]; tr.Source != withModel || tr.Model != "small" || tr.Plan != nil {
		t.Errorf("triage = source %q, model %q, plan %v; want the file's model-driven skill without a Go plan", tr.Source, tr.Model, tr.Plan != nil)
	}
	r := got[2]
	if r.Source != over || r.Description != "Refund money for a frobnicated order." || r.Plan == nil {
		t.Errorf("refunds = source %q, description %q, plan %v; want the file's, with the Go plan bound", r.Source, r.Description, r.Plan != nil)
	}
	wants := map[string]string{
		bad:                                      "front matter",
		noFM:                                     "no front matter",
		typo:                                     `unknown field "max-steps"`,
		wrongName:                                `differs from its directory's name "elsewhere"`,
		noPlan:                                   "not runnable yet: it names no model, and Warden has no built-in plan called warranty",
		missingFields:                            "description is missing",
		filepath.Join(dir, "nofile", "SKILL.md"): "no SKILL.md",
	}
	joined := errors.Join(problems...).Error()
	for path, reason := range wants {
		found := false
		for _, p := range problems {
			found = found || (strings.Contains(p.Error(), path) && strings.Contains(p.Error(), reason))
		}
		if !found {
			t.Errorf("no problem names %s with %q; problems:\n%s", path, reason, joined)
		}
	}
	if len(problems) != len(wants) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(wants), joined)
	}
	if !strings.Contains(joined, "tools is missing") || !strings.Contains(joined, "max_steps is missing") {
		t.Errorf("the empty skill's problem does not name every missing field:\n%s", joined)
	}

	// The replacement's front matter drives the router.
	router, err := NewRouter(got, DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	if s, _, err := router.Route("please frobnicate the widget", ""); err != nil || s.Name != "refunds" {
		t.Errorf("Route(frobnicate) = %s, %v; want refunds from the replacement's examples", s.Name, err)
	}
	if s, _, err := router.Route("billed twice for the same purchase", ""); s.Name == "refunds" {
		t.Errorf("a built-in example of the replaced skill still routes to it: %v", err)
	}
}

// A directory that cannot be read is reported, and the built-ins load.
func TestLoadMissingDirectory(t *testing.T) {
	got, problems := Load(filepath.Join(t.TempDir(), "absent"))
	if len(got) != 4 || len(problems) != 1 || !strings.Contains(problems[0].Error(), "skill directory") {
		t.Errorf("Load(absent) = %d skills, %v; want the 4 built-ins and the directory named", len(got), problems)
	}
}

// Every change to a SKILL.md, even to the instructions alone, changes the
// skill's hash and so the router's entries (the release's skill set).
func TestEntriesFollowTheFiles(t *testing.T) {
	base, _ := NewRouter(Demo(), DefaultThreshold)
	src, _ := builtinFiles.ReadFile("builtin/refunds/SKILL.md")
	dir := t.TempDir()
	writeSkill(t, dir, "refunds", string(src)+"\nOne more sentence.\n")
	loaded, problems := Load(dir)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	edited, _ := NewRouter(loaded, DefaultThreshold)
	a, b := base.Entries(), edited.Entries()
	for i := range a {
		if a[i].Name != b[i].Name || (a[i].Hash == b[i].Hash) != (a[i].Name != "refunds") || len(a[i].Hash) != 64 {
			t.Errorf("entry %d: %+v then %+v; want only refunds' hash changed", i, a[i], b[i])
		}
	}
}

// Instructions render as markdown; raw HTML in them is shown as text.
func TestRenderInstructionsEscapesRawHTML(t *testing.T) {
	got, err := RenderInstructions("# Title\n\n<script>alert(1)</script>\n\nSay <b onclick=\"x()\">hi</b> **now**.\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<b ", "onclick=\""} {
		if strings.Contains(got, bad) {
			t.Errorf("rendered instructions contain %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"<h2>Title</h2>", "&lt;script&gt;", "<strong>now</strong>"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered instructions lack %q:\n%s", want, got)
		}
	}
}

// A skill may name its owner and be marked high-risk; a high-risk skill
// without an owner, or an owner that is neither an e-mail nor group:NAME,
// is refused with the reason.
func TestSkillOwnerAndRisk(t *testing.T) {
	head := "---\nname: payouts\ndescription: Pay out\ntools: [lookup_order]\nmax_steps: 1\n"
	tests := []struct {
		name, extra, wantOwner, wantErr string
		wantHigh                        bool
	}{
		{"group owner, high-risk", "owner: group:payments\nhigh_risk: true\n", "group:payments", "", true},
		{"person owner", "owner: ana@example.com\n", "ana@example.com", "", false},
		{"no owner", "", "", "", false},
		{"high-risk without owner", "high_risk: true\n", "", "high_risk needs an owner", false},
		{"owner not an e-mail or group", "owner: payments team\n", "", "neither an e-mail address nor group:NAME", false},
		{"empty group", "owner: \"group:\"\n", "", "group:NAME", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sk, err := Parse([]byte(head + tt.extra + "---\nDo it.\n"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || sk.Owner != tt.wantOwner || sk.HighRisk != tt.wantHigh {
				t.Errorf("Parse = owner %q high-risk %v, %v; want %q %v", sk.Owner, sk.HighRisk, err, tt.wantOwner, tt.wantHigh)
			}
		})
	}
}
