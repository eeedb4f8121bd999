package audit

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"
)

func TestSignerKeyIsKeptAndPrivate(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreateSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateSigner(dir)
	if err != nil || !a.PublicKey().Equal(b.PublicKey()) {
		t.Fatalf("second load = %v, %v; want the same key", b, err)
	}
	fi, err := os.Stat(filepath.Join(dir, signingKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	sig := a.Sign([]byte("head"))
	pub, err := ParsePublicKey(a.PublicKeyText())
	if err != nil || !ed25519.Verify(pub, []byte("head"), sig) {
		t.Errorf("signature does not verify with the printed public key (%v)", err)
	}
	if _, err := ParsePublicKey("ed25519:short"); err == nil {
		t.Error("a malformed public key was accepted")
	}
}
