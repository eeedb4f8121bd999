package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tools/sim"
)

// builtinBundle is the release of the runtime as it is built in: the
// keyword router over the demo skills, the simulated provider's catalog
// and the impact-class approval policy. It has no model and no prompt.
func builtinBundle(router *skills.Router) (releases.Bundle, releases.Contents, error) {
	b := releases.Bundle{Model: "builtin:keyword-router", Prompt: "builtin:none", Approval: "builtin:impact-class/v1"}
	var err error
	if b.Tools, err = releases.ContentID(sim.Catalog()); err != nil {
		return releases.Bundle{}, nil, fmt.Errorf("built-in release: %w", err)
	}
	// The routing policy and skill set are held as content: the runtime
	// routes under the release a journey was admitted under. The skill
	// set names each skill with the hash of its SKILL.md, so editing a
	// skill file makes a new release.
	contents, err := releases.ContentsOf(map[string]any{
		"routing": releases.RoutingPolicy{Router: "keyword", Threshold: skills.DefaultThreshold},
		"skills":  router.Entries(),
	})
	if err != nil {
		return releases.Bundle{}, nil, fmt.Errorf("built-in release: %w", err)
	}
	if b.Routing, err = releases.ContentID(contents["routing"]); err != nil {
		return releases.Bundle{}, nil, err
	}
	if b.Skills, err = releases.ContentID(contents["skills"]); err != nil {
		return releases.Bundle{}, nil, err
	}
	return b, contents, nil
}

// publishBuiltin stores the built-in release (releases.PublishBuiltin) and
// returns its digest, which journeys run under until a release is
// activated.
func publishBuiltin(ctx context.Context, db *store.DB, router *skills.Router) (string, error) {
	b, contents, err := builtinBundle(router)
	if err != nil {
		return "", err
	}
	return releases.PublishBuiltin(ctx, db, b, contents)
}

// keepSkillFiles stores the SKILL.md of every loaded skill by its hash
// (releases.KeepSkillFiles), so that a release naming it can later be
// compared with another line by line.
func keepSkillFiles(ctx context.Context, db *store.DB, loaded []skills.Skill) error {
	var files []releases.SkillFile
	for _, s := range loaded {
		if s.Hash != "" && s.File != "" {
			files = append(files, releases.SkillFile{Name: s.Name, Hash: s.Hash, Body: s.File})
		}
	}
	return releases.KeepSkillFiles(ctx, db, files)
}

// The demo agent's two releases differ in their prompt, routing policy
// and skill set, so a newcomer can roll back and forward, see the diff
// name them, and see journeys change: the earlier release routes less
// eagerly and has no customer_email skill.
var demoReleases = []struct {
	prompt    string
	threshold float64
	skills    []string // nil: every skill
	note      string
}{
	{
		prompt:    "You are Acme's order support agent. Answer order questions; ask before any refund.",
		threshold: 0.45,
		skills:    []string{"order_status", "order_support", "refunds"},
		note:      "first release of the support agent",
	},
	{
		prompt:    "You are Acme's order support agent. Answer order questions briefly, quote the order id, and ask before any refund or change.",
		threshold: skills.DefaultThreshold,
		note:      "shorter answers; route more requests (threshold 0.40); e-mail customers (customer_email)",
	},
}

// seedDemoReleases publishes the demo agent's two releases, with their
// contents, and activates them in order, so the second is active and the
// first is in its history.
func seedDemoReleases(ctx context.Context, db *store.DB, router *skills.Router) error {
	base, _, err := builtinBundle(router)
	if err != nil {
		return err
	}
	base.Model = "openai:gpt-4o-mini-2024-07-18"
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"}, Name: "demo seed"}
	for _, r := range demoReleases {
		var set []skills.Entry
		for _, e := range router.Entries() {
			if r.skills == nil || slices.Contains(r.skills, e.Name) {
				set = append(set, e)
			}
		}
		contents, err := releases.ContentsOf(map[string]any{
			"prompt":  r.prompt,
			"routing": releases.RoutingPolicy{Router: "keyword", Threshold: r.threshold},
			"skills":  set,
		})
		if err != nil {
			return fmt.Errorf("demo release: %w", err)
		}
		b := base
		for s, id := range map[string]*string{"prompt": &b.Prompt, "routing": &b.Routing, "skills": &b.Skills} {
			if *id, err = releases.ContentID(contents[s]); err != nil {
				return err
			}
		}
		d, _, err := releases.Publish(ctx, db, by, b, contents, r.note)
		if err != nil {
			return fmt.Errorf("demo release: %w", err)
		}
		if _, _, err := releases.Activate(ctx, db, by, releases.DefaultAgent, releases.DefaultEnv, d, r.note); err != nil {
			return fmt.Errorf("demo release: %w", err)
		}
	}
	return nil
}
