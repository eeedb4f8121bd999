package releases

import (
	"context"
	"errors"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/textdiff"
)

// DiffContext is how many unchanged lines a text diff keeps around each
// change; longer unchanged stretches are folded away, as a code review
// folds them.
const DiffContext = 3

// TextDiff is what changed in one text two releases hold: a surface's
// content (the prompt, the routing policy, the tool catalog, the approval
// policy) or one skill's SKILL.md.
type TextDiff struct {
	ID      string // "prompt", "routing", …, or "skill-<name>" for a skill's file
	Surface string // the bundle surface it belongs to
	Title   string // what people call it: "prompt", "skills/refunds/SKILL.md"
	// Lines are the line diff from the first release to the second
	// (textdiff.Lines with DiffContext); nil when Missing.
	Lines []textdiff.Line
	// Before and After are the texts compared ("" where there is none):
	// for a skill's file, what its owner and risk are read from.
	Before, After string
	// Missing says why the text cannot be compared (Warden does not hold
	// it on one side); "" when Lines are the diff.
	Missing string
}

// TextDiffs compares the texts of the changed surfaces of from and to,
// line by line, in the order of Surfaces: each surface's content where
// Warden holds it, and for the skill set, each skill whose SKILL.md
// changed, was added or was removed. A surface whose content Warden
// holds on neither side is left out: only its identifiers differ.
func TextDiffs(ctx context.Context, q store.Querier, from, to Bundle) ([]TextDiff, error) {
	var out []TextDiff
	for _, s := range Diff(from, to) {
		if s == "model" {
			continue // a pinned deployment name, never content
		}
		before, err := ContentText(ctx, q, from.surface(s))
		if err != nil {
			return nil, err
		}
		after, err := ContentText(ctx, q, to.surface(s))
		if err != nil {
			return nil, err
		}
		if before == "" && after == "" {
			continue
		}
		title := s
		switch s {
		case "routing":
			title = "routing policy"
		case "approval":
			title = "approval policy"
		case "tools":
			title = "tool catalog"
		case "skills":
			title = "skill set"
		}
		out = append(out, TextDiff{ID: s, Surface: s, Title: title, Lines: textdiff.Lines(before, after, DiffContext)})
		if s == "skills" {
			files, err := skillFileDiffs(ctx, q, from.Skills, to.Skills)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
		}
	}
	return out, nil
}

// skillFileDiffs compares the SKILL.md of each skill the two skill sets
// name with different hashes: changed, added (nothing before) or removed
// (nothing after).
func skillFileDiffs(ctx context.Context, q store.Querier, fromID, toID string) ([]TextDiff, error) {
	before, err := skillHashes(ctx, q, fromID)
	if err != nil {
		return nil, err
	}
	after, err := skillHashes(ctx, q, toID)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, set := range [][]SkillEntry{before.entries, after.entries} {
		for _, e := range set {
			if !seen[e.Name] {
				seen[e.Name] = true
				names = append(names, e.Name)
			}
		}
	}
	var out []TextDiff
	for _, name := range names {
		h1, in1 := before.byName[name]
		h2, in2 := after.byName[name]
		if in1 && in2 && h1 == h2 {
			continue
		}
		d := TextDiff{ID: "skill-" + name, Surface: "skills", Title: "skills/" + name + "/SKILL.md"}
		var texts [2]string
		for i, side := range []struct {
			in   bool
			hash string
		}{{in1, h1}, {in2, h2}} {
			if !side.in {
				continue // added or removed: compared with nothing
			}
			if side.hash == "" {
				d.Missing = "This release names the skill without its file's hash, so there is no file to compare."
				break
			}
			body, err := SkillFileBody(ctx, q, side.hash)
			if errors.Is(err, store.ErrNotFound) {
				d.Missing = "Warden does not hold the SKILL.md with SHA-256 " + side.hash + ": it was never loaded here."
				break
			}
			if err != nil {
				return nil, err
			}
			texts[i] = body
		}
		d.Before, d.After = texts[0], texts[1]
		if d.Missing == "" {
			d.Lines = textdiff.Lines(texts[0], texts[1], DiffContext)
		}
		out = append(out, d)
	}
	return out, nil
}

// skillSetHashes is a skill set by name, in its order.
type skillSetHashes struct {
	entries []SkillEntry
	byName  map[string]string
}

// skillHashes reads the skill set content id names; an empty set when
// Warden does not hold it.
func skillHashes(ctx context.Context, q store.Querier, id string) (skillSetHashes, error) {
	out := skillSetHashes{byName: map[string]string{}}
	raw, err := Content(ctx, q, id)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if out.entries, err = SkillSet(raw); err != nil {
		return out, err
	}
	for _, e := range out.entries {
		out.byName[e.Name] = e.Hash
	}
	return out, nil
}
