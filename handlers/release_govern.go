package handlers

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/skills"
)

// releaseProposal is the governed change (changes.ReleaseActivate) of
// moving agent's pointer in env to the release to: from the release seen
// active (from; "" reads the active one now), as move ("activated",
// "promoted", or a rollback, which is "rolled_back" when to ran before
// the active release and "rolled_forward" otherwise). ok is false when
// there is nothing to govern: to is already active, or is unknown (the
// move itself then answers).
func (h *Console) releaseProposal(ctx context.Context, agent, env, from, to, move, reason, by string) (p changes.Proposal, ok bool, err error) {
	q := h.DB.Read()
	target, err := releases.Get(ctx, q, to)
	if err != nil {
		return p, false, nil
	}
	cur := releases.NoneActive
	switch a, err := releases.Active(ctx, q, agent, env); {
	case err == nil:
		cur = a.Digest
	case !errors.Is(err, store.ErrNotFound):
		return p, false, err
	}
	if cur == to {
		return p, false, nil
	}
	switch {
	case from == "":
		from = cur
	case from != cur:
		return p, false, releases.ErrMovedMeanwhile
	}
	var base releases.Bundle
	if from != releases.NoneActive {
		pub, err := releases.Get(ctx, q, from)
		if err != nil {
			return p, false, nil
		}
		base = pub.Bundle
	}
	if move == releases.KindRolledBack {
		earlier, err := releases.Earlier(ctx, q, agent, env, from, to)
		if err != nil {
			return p, false, err
		}
		if !earlier {
			move = "rolled_forward"
		}
	}
	surfaces := releases.Diff(base, target.Bundle)
	owners, err := highRiskOwners(ctx, h, base, target.Bundle)
	if err != nil {
		return p, false, err
	}
	verb := map[string]string{releases.KindActivated: "Activate", "rolled_forward": "Roll forward to", releases.KindRolledBack: "Roll back to",
		releases.KindPromoted: "Promote the canary"}[move]
	summary := verb + " release " + releaseShort(to) + " for " + agent + " in " + env
	if len(surfaces) > 0 {
		summary += " (changes " + strings.Join(surfaces, ", ") + ")"
	}
	return changes.Proposal{Kind: changes.ReleaseActivate, Subject: agent + "/" + env, Summary: summary, Reason: reason,
		Before: changes.Release{Agent: agent, Env: env, Digest: from},
		After: changes.Release{Agent: agent, Env: env, Digest: to, From: from, Move: move, Surfaces: surfaces, Reason: strings.TrimSpace(reason), By: by,
			Owners: owners},
	}, true, nil
}

func releaseShort(d string) string {
	const prefix = len("sha256:")
	if len(d) < prefix+12 {
		return d
	}
	return d[prefix : prefix+12]
}

// highRiskOwners are the high-risk skills whose SKILL.md the move from
// one bundle to another changes, adds or removes, with their owners (from
// the file on either side: a release may not drop its own high_risk
// mark unseen by the owner).
func highRiskOwners(ctx context.Context, h *Console, from, to releases.Bundle) ([]changes.SkillOwner, error) {
	texts, err := releases.TextDiffs(ctx, h.DB.Read(), from, to)
	if err != nil {
		return nil, err
	}
	var out []changes.SkillOwner
	for _, t := range texts {
		name, ok := strings.CutPrefix(t.ID, "skill-")
		if !ok {
			continue
		}
		bodies := []string{t.Before, t.After}
		if t.Missing != "" {
			// A side Warden cannot read (a skill named without its file's
			// hash): judge by the skill of that name as it runs now, so a
			// high-risk skill is not added or removed by name unseen.
			bodies = append(bodies, h.runningSkillFile(ctx, name))
		}
		for _, body := range bodies {
			if body == "" {
				continue
			}
			sk, err := skills.Parse([]byte(body))
			if err != nil || !sk.HighRisk {
				continue
			}
			o := changes.SkillOwner{Skill: name, Owner: sk.Owner}
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// runningSkillFile is the SKILL.md of the skill called name as the agent
// runtime loaded it ("" when none runs here or its file is not held).
func (h *Console) runningSkillFile(ctx context.Context, name string) string {
	if h.Runtime == nil {
		return ""
	}
	for _, sp := range h.Runtime.Skills() {
		if sp.Name != name || sp.Hash == "" {
			continue
		}
		if body, err := releases.SkillFileBody(ctx, h.DB.Read(), sp.Hash); err == nil {
			return body
		}
	}
	return ""
}
