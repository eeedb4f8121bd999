package changes

import (
	"os"
	"strings"
	"testing"
)

// TestDocMatchesTable keeps docs/changes.md's table the one the code
// decides by: regenerate it with WARDEN_UPDATE_DOCS=1.
func TestDocMatchesTable(t *testing.T) {
	const path = "../docs/changes.md"
	const begin, end = "<!-- table: generated from changes.Table -->\n", "<!-- end table -->"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, strings.TrimSpace(begin), end)
	}
	got, want := doc[i+len(begin):j], Markdown()
	if got == want {
		return
	}
	if os.Getenv("WARDEN_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's table differs from changes.Table; run WARDEN_UPDATE_DOCS=1 go test ./changes -run TestDocMatchesTable\ngot:\n%s\nwant:\n%s", path, got, want)
}
