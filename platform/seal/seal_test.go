package seal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealRoundTripAndBinding(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(`{"account":"DE89370400440532013000"}`)
	sealed := s.Seal(secret, "act_1")
	if strings.Contains(sealed, "DE89") {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := s.Open(sealed, "act_1")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := s.Open(sealed, "act_2"); err == nil {
		t.Error("a value sealed for act_1 opened for act_2")
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := s.Open(tampered, "act_1"); err == nil {
		t.Error("a tampered value opened")
	}
	// The key persists with mode 0600; another installation cannot open.
	again, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Open(sealed, "act_1"); err != nil {
		t.Errorf("reloaded key cannot open: %v", err)
	}
	st, _ := os.Stat(filepath.Join(dir, keyFile))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key mode %o, want 600", st.Mode().Perm())
	}
	other, _ := LoadOrCreate(t.TempDir())
	if _, err := other.Open(sealed, "act_1"); err == nil {
		t.Error("another installation's key opened the value")
	}
}
