package redact

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestLoadOrCreateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	key, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatalf("LoadOrCreateKey(%q): %v", dir, err)
	}
	if len(key) != KeySize {
		t.Errorf("LoadOrCreateKey(%q) = %d bytes, want %d", dir, len(key), KeySize)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %04o, want 0600", fi.Mode().Perm())
	}
	again, err := LoadOrCreateKey(dir)
	if err != nil || !bytes.Equal(again, key) {
		t.Errorf("LoadOrCreateKey(%q) again = %x, %v, want %x (stable)", dir, again, err, key)
	}
	if a, b := New(key).Token("email", "jane@example.com"), New(again).Token("email", "jane@example.com"); a != b {
		t.Errorf("tokens after reloading the key: %s and %s, want equal", a, b)
	}

	// Another installation.
	other, err := LoadOrCreateKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other, key) {
		t.Errorf("two installations share the key %x", key)
	}
	if a, b := New(key).Token("email", "jane@example.com"), New(other).Token("email", "jane@example.com"); a == b {
		t.Errorf("two installations give the same token %s", a)
	}
}

func TestLoadOrCreateKeyRefusesBadFile(t *testing.T) {
	for _, size := range []int{0, 16, 31, 33, 64} {
		dir := t.TempDir()
		path := filepath.Join(dir, KeyFile)
		if err := os.WriteFile(path, bytes.Repeat([]byte{7}, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if key, err := LoadOrCreateKey(dir); err == nil {
			t.Errorf("LoadOrCreateKey with a %d-byte key file = %x, nil, want an error", size, key)
		}
		if b, _ := os.ReadFile(path); len(b) != size {
			t.Errorf("LoadOrCreateKey replaced a %d-byte key file with %d bytes, want it left alone", size, len(b))
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, KeyFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("LoadOrCreateKey with a directory for a key = %v, want a not-a-regular-file error", err)
	}
}

func TestLoadOrCreateKeyTightensMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	want := bytes.Repeat([]byte{9}, KeySize)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := LoadOrCreateKey(dir)
	if err != nil || !bytes.Equal(key, want) {
		t.Fatalf("LoadOrCreateKey = %x, %v, want %x", key, err, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %04o after loading, want 0600", fi.Mode().Perm())
	}
}
