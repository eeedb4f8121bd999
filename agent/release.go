package agent

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/agent/releases"
	"github.com/wardenhq/warden/agent/skills"
	"github.com/wardenhq/warden/agent/tools/sim"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
)

// builtinBundle is the release of the runtime as it is built in: the
// keyword router over the demo skills, the simulated provider's catalog
// and the impact-class approval policy. It has no model and no prompt.
func builtinBundle(router *skills.Router) (releases.Bundle, error) {
	b := releases.Bundle{Model: "builtin:keyword-router", Prompt: "builtin:none", Approval: "builtin:impact-class/v1"}
	for _, c := range []struct {
		id *string
		v  any
	}{
		{&b.Tools, sim.Catalog()},
		{&b.Routing, map[string]any{"router": "keyword", "threshold": skills.DefaultThreshold}},
		{&b.Skills, router.Names()},
	} {
		id, err := releases.ContentID(c.v)
		if err != nil {
			return releases.Bundle{}, fmt.Errorf("built-in release: %w", err)
		}
		*c.id = id
	}
	return b, nil
}

// publishBuiltin stores the built-in release (releases.PublishBuiltin) and
// returns its digest, which journeys run under until a release is
// activated.
func publishBuiltin(ctx context.Context, db *store.DB, router *skills.Router) (string, error) {
	b, err := builtinBundle(router)
	if err != nil {
		return "", err
	}
	return releases.PublishBuiltin(ctx, db, b)
}

// The demo agent's two prompts and routing policies: the earlier release
// and the active one differ in both, so a newcomer can roll back and
// forward and see the diff name them.
var demoReleases = []struct {
	prompt  string
	routing map[string]any
	note    string
}{
	{
		prompt:  "You are Acme's order support agent. Answer order questions; ask before any refund.",
		routing: map[string]any{"router": "keyword", "threshold": 0.45},
		note:    "first release of the support agent",
	},
	{
		prompt:  "You are Acme's order support agent. Answer order questions briefly, quote the order id, and ask before any refund or change.",
		routing: map[string]any{"router": "keyword", "threshold": skills.DefaultThreshold},
		note:    "shorter answers; route more requests (threshold 0.40)",
	},
}

// seedDemoReleases publishes the demo agent's two releases and activates
// them in order, so the second is active and the first is in its history.
func seedDemoReleases(ctx context.Context, db *store.DB, router *skills.Router) error {
	base, err := builtinBundle(router)
	if err != nil {
		return err
	}
	base.Model = "openai:gpt-4o-mini-2024-07-18"
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"}, Name: "demo seed"}
	for _, r := range demoReleases {
		b := base
		if b.Prompt, err = releases.ContentID(r.prompt); err != nil {
			return err
		}
		if b.Routing, err = releases.ContentID(r.routing); err != nil {
			return err
		}
		d, _, err := releases.Publish(ctx, db, by, b, r.note)
		if err != nil {
			return fmt.Errorf("demo release: %w", err)
		}
		if _, _, err := releases.Activate(ctx, db, by, releases.DefaultAgent, releases.DefaultEnv, d, r.note); err != nil {
			return fmt.Errorf("demo release: %w", err)
		}
	}
	return nil
}
