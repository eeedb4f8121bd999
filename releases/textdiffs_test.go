package releases_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/textdiff"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/releases/releasetest"
)

// diffText writes a text diff as a review shows it, one line per line.
func diffText(lines []textdiff.Line) string {
	var b strings.Builder
	for _, l := range lines {
		switch l.Op {
		case textdiff.Added:
			b.WriteString("+" + l.Text + "\n")
		case textdiff.Removed:
			b.WriteString("-" + l.Text + "\n")
		case textdiff.Same:
			b.WriteString(" " + l.Text + "\n")
		case textdiff.Skipped:
			b.WriteString("…\n")
		}
	}
	return b.String()
}

func TestTextDiffsShowPromptAndSkillFileLines(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	earlier, later := releasetest.DiffPair(t, db)
	from, err := releases.Get(ctx, db.Read(), later)
	if err != nil {
		t.Fatal(err)
	}
	to, err := releases.Get(ctx, db.Read(), earlier)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := releases.TextDiffs(ctx, db.Read(), from.Bundle, to.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var ids []string
	for _, d := range texts {
		ids = append(ids, d.ID)
		got[d.ID] = diffText(d.Lines)
		if d.Missing != "" {
			t.Errorf("%s: missing %q", d.ID, d.Missing)
		}
	}
	if want := "prompt skills skill-refunds"; strings.Join(ids, " ") != want {
		t.Errorf("texts compared = %v, want %s (routing is the same in both)", ids, want)
	}
	wantPrompt := " You are Acme's order support agent.\n" +
		"-Answer order questions briefly, quoting the order id.\n" +
		"+Answer order questions.\n" +
		" Ask before any refund.\n" +
		"-<b>Never</b> promise a delivery date.\n"
	if got["prompt"] != wantPrompt {
		t.Errorf("prompt diff =\n%s\nwant\n%s", got["prompt"], wantPrompt)
	}
	wantSkill := "…\n ---\n \n Look up the order.\n-Refund at most what remains refundable.\n+Refund what the customer paid.\n Say when the money arrives.\n"
	if got["skill-refunds"] != wantSkill {
		t.Errorf("SKILL.md diff =\n%s\nwant\n%s", got["skill-refunds"], wantSkill)
	}
	for _, d := range texts {
		if d.ID == "skill-refunds" && d.Title != "skills/refunds/SKILL.md" {
			t.Errorf("skill file title = %q", d.Title)
		}
	}

	// The same release twice: nothing to show.
	if same, err := releases.TextDiffs(ctx, db.Read(), from.Bundle, from.Bundle); err != nil || len(same) != 0 {
		t.Errorf("TextDiffs of a release with itself = %+v, %v; want none", same, err)
	}
}

func TestTextDiffsSaySkillFileNotHeld(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	by := releases.Author{Name: "test"}
	by.Actor.Type, by.Actor.ID = "system", "test"
	var bundles []releases.Bundle
	for _, hash := range []string{strings.Repeat("a", 64), strings.Repeat("b", 64)} {
		contents, err := releases.ContentsOf(map[string]any{"skills": []releases.SkillEntry{{Name: "refunds", Hash: hash}}})
		if err != nil {
			t.Fatal(err)
		}
		b := releases.Bundle{Model: "m:1", Prompt: "builtin:none", Tools: "catalog:v1", Routing: "builtin:keyword", Approval: "builtin:impact-class/v1"}
		if b.Skills, err = releases.ContentID(contents["skills"]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := releases.Publish(ctx, db, by, b, contents, ""); err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, b)
	}
	texts, err := releases.TextDiffs(ctx, db.Read(), bundles[0], bundles[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 2 || texts[1].ID != "skill-refunds" || !strings.Contains(texts[1].Missing, "does not hold the SKILL.md") || texts[1].Lines != nil {
		t.Errorf("texts = %+v; want the skill set's diff, then refunds' file named as not held", texts)
	}
}
