// Package textdiff compares two texts line by line, the way a code review
// shows a change: removed lines, added lines, and the unchanged lines
// around them, with long unchanged stretches folded away.
//
//	for _, l := range textdiff.Lines(before, after, 3) {
//		switch l.Op {
//		case textdiff.Removed: // "- " + l.Text, l.Old its line number before
//		case textdiff.Added:   // "+ " + l.Text, l.New its line number after
//		case textdiff.Same:    // "  " + l.Text
//		case textdiff.Skipped: // l.Skipped unchanged lines folded away
//		}
//	}
//
// The diff itself is github.com/sergi/go-diff's Myers diff over lines
// (each line mapped to one rune, diffed, and mapped back), which finds a
// shortest edit script.
package textdiff

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Op is what happened to a line.
type Op int

const (
	Same    Op = iota // in both texts
	Removed           // only in the text before
	Added             // only in the text after
	Skipped           // a run of unchanged lines folded away
)

// Line is one line of a diff.
type Line struct {
	Op   Op
	Text string // the line without its line break; "" for Skipped
	// Old and New are the line's 1-based numbers in the text before and
	// after; 0 where it is not in that text (and for Skipped).
	Old, New int
	// Skipped is how many unchanged lines a Skipped line stands for.
	Skipped int
}

// Lines is the line diff of before and after. Unchanged lines more than
// context lines away from any change are folded into Skipped lines; a
// negative context keeps every line. Equal texts give no lines at all. A
// final line break does not make a line of its own, and "\r\n" counts as
// a line break.
func Lines(before, after string, context int) []Line {
	if before == after {
		return nil
	}
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToRunes(normalise(before), normalise(after))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(a, b, false), lines)
	var all []Line
	old, nu := 0, 0
	for _, d := range diffs {
		for _, text := range strings.SplitAfter(d.Text, "\n") {
			if text == "" {
				continue // after the last line break
			}
			text = strings.TrimSuffix(text, "\n")
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				old, nu = old+1, nu+1
				all = append(all, Line{Op: Same, Text: text, Old: old, New: nu})
			case diffmatchpatch.DiffDelete:
				old++
				all = append(all, Line{Op: Removed, Text: text, Old: old})
			case diffmatchpatch.DiffInsert:
				nu++
				all = append(all, Line{Op: Added, Text: text, New: nu})
			}
		}
	}
	if context < 0 {
		return all
	}
	return fold(all, context)
}

// normalise ends every line, the last included, with "\n", so that a
// text with and one without a final line break differ in no line.
func normalise(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// fold keeps the changes and context unchanged lines on each side of
// them, and replaces every longer run of unchanged lines by one Skipped
// line.
func fold(all []Line, context int) []Line {
	keep := make([]bool, len(all))
	for i, l := range all {
		if l.Op == Same {
			continue
		}
		for j := max(0, i-context); j <= min(len(all)-1, i+context); j++ {
			keep[j] = true
		}
	}
	var out []Line
	for i := 0; i < len(all); {
		if keep[i] {
			out = append(out, all[i])
			i++
			continue
		}
		j := i
		for j < len(all) && !keep[j] {
			j++
		}
		out = append(out, Line{Op: Skipped, Skipped: j - i})
		i = j
	}
	return out
}

// Count is how many lines were added and removed.
func Count(lines []Line) (added, removed int) {
	for _, l := range lines {
		switch l.Op {
		case Added:
			added++
		case Removed:
			removed++
		}
	}
	return added, removed
}
