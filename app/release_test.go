package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/skills"
)

func routerFrom(t *testing.T, dir string) *skills.Router {
	t.Helper()
	loaded, problems := skills.Load(dir)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	r, err := skills.NewRouter(loaded, skills.DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The built-in release's skill set names each skill with the hash of its
// SKILL.md: the same files give the same digest, and editing one file —
// even its instructions alone — gives another.
func TestBuiltinDigestFollowsSkillFiles(t *testing.T) {
	digest := func(r *skills.Router) string {
		b, contents, err := builtinBundle(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(contents["skills"]), `"hash":"`) {
			t.Errorf("skills content %s carries no hashes", contents["skills"])
		}
		return b.Digest()
	}
	builtin := digest(routerFrom(t, ""))
	if again := digest(routerFrom(t, "")); again != builtin {
		t.Errorf("digest changed between two loads of the same files: %s, %s", builtin, again)
	}
	dir := t.TempDir()
	src := skills.Demo()[3] // customer_email
	orig, err := os.ReadFile(filepath.Join("..", "skills", "builtin", src.Name, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, src.Name), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) {
		if err := os.WriteFile(filepath.Join(dir, src.Name, "SKILL.md"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(orig)
	if same := digest(routerFrom(t, dir)); same != builtin {
		t.Errorf("an identical copy of a built-in SKILL.md changed the digest: %s, want %s", same, builtin)
	}
	write(append(orig, []byte("\nSign every e-mail \"The Acme team\".\n")...))
	if edited := digest(routerFrom(t, dir)); edited == builtin {
		t.Errorf("editing %s's SKILL.md left the built-in release digest at %s", src.Name, builtin)
	}
}
