package web

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation carries no unresolved merge conflicts, and the
// agents' error table names the codes a model-driven journey ends with.
func TestDocsHaveNoConflictMarkersAndListModelErrors(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	files = append(files, "../README.md")
	marker := regexp.MustCompile(`(?m)^(<<<<<<< |=======$|>>>>>>> )`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := marker.FindIndex(b); loc != nil {
			line := strings.Count(string(b[:loc[0]]), "\n") + 1
			t.Errorf("%s:%d: unresolved merge conflict marker", f, line)
		}
	}
	api, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"`max_steps_exceeded`", "`model_unavailable`"} {
		if !strings.Contains(string(api), code) {
			t.Errorf("docs/api.md does not list %s", code)
		}
	}
}
