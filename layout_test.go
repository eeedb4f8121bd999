package warden_test

// The import direction of Warden's packages is a rule, and this test is
// where it lives. Every package belongs to one tier by its top folder:
//
//	platform  platform/...              infrastructure: imports no Warden package outside platform
//	domain    approvals, journeys, ...  one folder per noun; imports platform and other domains, never
//	                                    app, config, views, static, handlers, web or cmd
//	app       app, config               the composition root and configuration
//	views     views, static             templ pages and embedded assets
//	handlers  handlers                  Echo handlers: parse, call one domain function, render
//	web       web/...                   the server, routes and middleware
//	top       cmd/..., bench/...        binaries and load tools
//
// A package may import its own tier and the tiers below it. Between
// domain nouns (a noun is a top folder: execution and execution/ledger are
// one noun) imports must not form a cycle, so each noun can be read with
// only the nouns below it in mind. Echo and templ stay at the views tier
// and above: a rule never depends on the web framework.
//
// A new top folder fails the test until it is given a tier below.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/wardenhq/warden"

type tier int

const (
	tierPlatform tier = iota
	tierDomain
	tierApp
	tierViews
	tierHandlers
	tierWeb
	tierTop
)

func (t tier) String() string {
	return [...]string{"platform", "domain", "app", "views", "handlers", "web", "top"}[t]
}

// tiers gives each top folder its tier.
var tiers = map[string]tier{
	"platform": tierPlatform,

	"admission": tierDomain, "alerts": tierDomain, "allowlist": tierDomain, "approvals": tierDomain, "audit": tierDomain,
	"budgets": tierDomain, "catalog": tierDomain, "changes": tierDomain, "execution": tierDomain, "journeys": tierDomain,
	"keys": tierDomain, "mcpservers": tierDomain, "models": tierDomain, "notify": tierDomain, "policy": tierDomain, "releases": tierDomain,
	"owners": tierDomain, "principals": tierDomain, "routelabels": tierDomain, "runbooks": tierDomain, "search": tierDomain, "sessions": tierDomain, "signin": tierDomain, "skills": tierDomain,
	"tenants": tierDomain, "tools": tierDomain,

	"app": tierApp, "config": tierApp,

	"views": tierViews, "static": tierViews,

	"handlers": tierHandlers,

	"web": tierWeb,

	"cmd": tierTop, "bench": tierTop,
}

// frameworks are third-party modules only the views tier and above import.
var frameworks = []string{"github.com/labstack/echo", "github.com/a-h/templ"}

type listed struct {
	ImportPath string
	Imports    []string
}

// packages lists Warden's packages with their (non-test) imports.
func packages(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; run the test from the module root", len(pkgs))
	}
	return pkgs
}

// rel is path inside the module ("" for the module root); ok is false for
// a path outside it.
func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// noun is the top folder of a path inside the module.
func noun(r string) string { top, _, _ := strings.Cut(r, "/"); return top }

func TestImportDirection(t *testing.T) {
	pkgs := packages(t)
	nounEdges := map[string]map[string]string{} // noun → imported noun → one example "a imports b"
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		if from == "" {
			continue // this test's own package
		}
		ft, known := tiers[noun(from)]
		if !known {
			t.Errorf("%s: top folder %q has no tier; add it to tiers in layout_test.go", from, noun(from))
			continue
		}
		for _, imp := range p.Imports {
			if ft < tierViews {
				for _, fw := range frameworks {
					if imp == fw || strings.HasPrefix(imp, fw+"/") {
						t.Errorf("%s imports %s: rule: below the views tier nothing depends on the web framework; %s is %s tier", from, imp, from, ft)
					}
				}
			}
			to, inside := rel(imp)
			if !inside {
				continue
			}
			tt, known := tiers[noun(to)]
			if !known {
				continue // reported as its own package
			}
			if tt > ft {
				t.Errorf("%s imports %s: rule: a package imports its own tier and the tiers below; %s is %s tier, %s is %s tier", from, to, from, ft, to, tt)
			}
			if ft == tierDomain && tt == tierDomain && noun(from) != noun(to) {
				if nounEdges[noun(from)] == nil {
					nounEdges[noun(from)] = map[string]string{}
				}
				if _, seen := nounEdges[noun(from)][noun(to)]; !seen {
					nounEdges[noun(from)][noun(to)] = from + " imports " + to
				}
			}
		}
	}
	for _, cycle := range cycles(nounEdges) {
		var how []string
		for i, n := range cycle[:len(cycle)-1] {
			how = append(how, nounEdges[n][cycle[i+1]])
		}
		t.Errorf("domain nouns import each other in a cycle %s (%s): rule: domain nouns form no cycle; move the shared part into the lower noun or into platform",
			strings.Join(cycle, " → "), strings.Join(how, "; "))
	}
}

// cycles finds the import cycles among nouns, each once, as a path that
// starts and ends at the same noun.
func cycles(edges map[string]map[string]string) [][]string {
	var nouns []string
	for n := range edges {
		nouns = append(nouns, n)
	}
	sort.Strings(nouns)
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var found [][]string
	var visit func(n string)
	visit = func(n string) {
		state[n] = open
		stack = append(stack, n)
		var next []string
		for m := range edges[n] {
			next = append(next, m)
		}
		sort.Strings(next)
		for _, m := range next {
			switch state[m] {
			case unseen:
				visit(m)
			case open:
				i := slices.Index(stack, m)
				found = append(found, append(slices.Clone(stack[i:]), m))
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, n := range nouns {
		if state[n] == unseen {
			visit(n)
		}
	}
	return found
}

// TestCyclesFindsALoop keeps the cycle search honest: a test that could
// never fail would prove nothing.
func TestCyclesFindsALoop(t *testing.T) {
	edges := map[string]map[string]string{
		"a": {"b": ""}, "b": {"c": ""}, "c": {"a": ""}, "d": {"a": ""},
	}
	got := fmt.Sprint(cycles(edges))
	if got != "[[a b c a]]" {
		t.Fatalf("cycles = %s, want [[a b c a]]", got)
	}
	if c := cycles(map[string]map[string]string{"a": {"b": ""}, "b": {}}); len(c) != 0 {
		t.Fatalf("cycles of a DAG = %v, want none", c)
	}
}
