// Package releasetest publishes releases for tests that need two releases
// to compare.
package releasetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
)

// Agent and Env are where DiffPair activates its releases: an agent of
// their own, so a demo's releases do not mix with them.
const (
	Agent = "diff-agent"
	Env   = "staging"
)

// The texts the two releases of DiffPair differ in. The later prompt
// holds markup, which a page must show as text.
const (
	EarlierPrompt = "You are Acme's order support agent.\nAnswer order questions.\nAsk before any refund."
	LaterPrompt   = "You are Acme's order support agent.\nAnswer order questions briefly, quoting the order id.\nAsk before any refund.\n<b>Never</b> promise a delivery date."

	EarlierSkill = "---\nname: refunds\ndescription: Refund an order.\ntools: [issue_refund]\nmax_steps: 2\n---\n\nLook up the order.\nRefund what the customer paid.\nSay when the money arrives.\n"
	LaterSkill   = "---\nname: refunds\ndescription: Refund an order.\ntools: [issue_refund]\nmax_steps: 2\n---\n\nLook up the order.\nRefund at most what remains refundable.\nSay when the money arrives.\n"
)

// DiffPair publishes two releases of Agent in Env that differ in their
// prompt and in the refunds skill's SKILL.md (both files kept), and
// activates the earlier and then the later one. It returns their digests.
func DiffPair(t testing.TB, db *store.DB) (earlier, later string) {
	t.Helper()
	ctx := context.Background()
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorSystem, ID: "test"}, Name: "test"}
	var digests [2]string
	for i, r := range []struct{ prompt, skill string }{{EarlierPrompt, EarlierSkill}, {LaterPrompt, LaterSkill}} {
		sum := sha256.Sum256([]byte(r.skill))
		hash := hex.EncodeToString(sum[:])
		if err := releases.KeepSkillFiles(ctx, db, []releases.SkillFile{{Name: "refunds", Hash: hash, Body: r.skill}}); err != nil {
			t.Fatal(err)
		}
		contents, err := releases.ContentsOf(map[string]any{
			"prompt":  r.prompt,
			"routing": releases.RoutingPolicy{Router: "keyword", Threshold: 0.4},
			"skills":  []releases.SkillEntry{{Name: "refunds", Hash: hash}},
		})
		if err != nil {
			t.Fatal(err)
		}
		b := releases.Bundle{Model: "openai:gpt-4o-mini-2024-07-18", Tools: "catalog:v1", Approval: "builtin:impact-class/v1"}
		for s, id := range map[string]*string{"prompt": &b.Prompt, "routing": &b.Routing, "skills": &b.Skills} {
			if *id, err = releases.ContentID(contents[s]); err != nil {
				t.Fatal(err)
			}
		}
		d, _, err := releases.Publish(ctx, db, by, b, contents, "release "+string(rune('1'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := releases.Activate(ctx, db, by, Agent, Env, d, "test"); err != nil {
			t.Fatal(err)
		}
		digests[i] = d
	}
	return digests[0], digests[1]
}
