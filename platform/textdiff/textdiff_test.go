package textdiff

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// render writes a diff as a review shows it, one line per diff line.
func render(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		switch l.Op {
		case Same:
			fmt.Fprintf(&b, "  %s\n", l.Text)
		case Removed:
			fmt.Fprintf(&b, "- %s\n", l.Text)
		case Added:
			fmt.Fprintf(&b, "+ %s\n", l.Text)
		case Skipped:
			fmt.Fprintf(&b, "… %d\n", l.Skipped)
		}
	}
	return b.String()
}

func TestLines(t *testing.T) {
	ten := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	for _, tt := range []struct {
		name, before, after string
		context             int
		want                string
	}{
		{"equal", "a\nb\n", "a\nb\n", 3, ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", 3, "  a\n- b\n+ B\n  c\n"},
		{"added at the end", "a\n", "a\nb\n", 3, "  a\n+ b\n"},
		{"from nothing", "", "a\nb", 3, "+ a\n+ b\n"},
		{"to nothing", "a\n", "", 3, "- a\n"},
		{"final line break ignored", "a\nb", "a\nb\nc", 3, "  a\n  b\n+ c\n"},
		{"CRLF is a line break", "a\r\nb\r\n", "a\nb\nc\n", 3, "  a\n  b\n+ c\n"},
		{"context folds the middle", ten, strings.Replace(strings.Replace(ten, "1\n", "one\n", 1), "10\n", "ten\n", 1), 1,
			"- 1\n+ one\n  2\n… 6\n  9\n- 10\n+ ten\n"},
		{"no context", ten, strings.Replace(ten, "5\n", "five\n", 1), 0, "… 4\n- 5\n+ five\n… 5\n"},
		{"every line kept", "a\nb\nc\n", "a\nc\n", -1, "  a\n- b\n  c\n"},
		{"markup stays text", "<b>x</b>\n", "<script>y</script>\n", 3, "- <b>x</b>\n+ <script>y</script>\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(Lines(tt.before, tt.after, tt.context)); got != tt.want {
				t.Errorf("Lines(%q, %q, %d) =\n%s\nwant\n%s", tt.before, tt.after, tt.context, got, tt.want)
			}
		})
	}
}

func TestLineNumbers(t *testing.T) {
	got := Lines("a\nb\nc\n", "a\nx\nc\nd\n", -1)
	want := []Line{
		{Op: Same, Text: "a", Old: 1, New: 1},
		{Op: Removed, Text: "b", Old: 2},
		{Op: Added, Text: "x", New: 2},
		{Op: Same, Text: "c", Old: 3, New: 3},
		{Op: Added, Text: "d", New: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Lines = %+v\nwant %+v", got, want)
	}
	if a, r := Count(got); a != 2 || r != 1 {
		t.Errorf("Count = %d added, %d removed; want 2, 1", a, r)
	}
}
