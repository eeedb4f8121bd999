package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

func randomHex(t *testing.T) string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Replicas given the same WARDEN_SEALING_KEY, WARDEN_REDACTION_KEY and
// WARDEN_AUDIT_SIGNING_KEY (here one of them as a _FILE, as a mounted
// secret) seal, redact and sign alike, each with its own data directory;
// a data directory that already holds another key is refused unchanged.
func TestInstallationKeysFromSettings(t *testing.T) {
	ctx := context.Background()
	sealing, redaction, signing := randomHex(t), randomHex(t), randomHex(t)
	secretDir := t.TempDir()
	redactionFile := filepath.Join(secretDir, "redaction")
	os.WriteFile(redactionFile, []byte(redaction+"\n"), 0o600)
	envFor := func(dir string) func(string) (string, bool) {
		return envMap(map[string]string{
			"WARDEN_DATA_DIR":               dir,
			"WARDEN_SEALING_KEY":            sealing,
			"WARDEN_REDACTION_KEY_FILE":     redactionFile,
			"WARDEN_AUDIT_SIGNING_KEY":      signing,
			"WARDEN_SESSION_HASH_KEY":       randomHex(t),
			"WARDEN_SESSION_BLOCK_KEY":      randomHex(t),
			"WARDEN_DATABASE_URL":           "",
			"WARDEN_DB_MAX_CONNS":           "2",
			"WARDEN_AUDIT_SIGNING_KEY_FILE": "",
		})
	}
	newInstall := func() string {
		dir := t.TempDir()
		db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
		if err != nil {
			t.Fatal(err)
		}
		db.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, "acme", "Acme"); return err })
		db.Close()
		return dir
	}
	a, b := newInstall(), newInstall()
	var pubs []string
	for _, dir := range []string{a, b} {
		var out, errb bytes.Buffer
		if code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "bot", "--scopes", "skill:order_status"}, envFor(dir), &out, &errb); code != 0 {
			t.Fatalf("keys create in %s = %d: %s", dir, code, errb.String())
		}
		out.Reset()
		if code := run(ctx, []string{"audit", "pubkey"}, envFor(dir), &out, &errb); code != 0 {
			t.Fatalf("audit pubkey = %d: %s", code, errb.String())
		}
		pubs = append(pubs, strings.TrimSpace(out.String()))
	}
	seed, _ := hex.DecodeString(signing)
	want := audit.FormatPublicKey(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	if pubs[0] != want || pubs[1] != want {
		t.Errorf("audit pubkey of the two installations = %q; want both %q, the configured key's", pubs, want)
	}
	if fromFile, err := audit.LoadPublicKey(b); err != nil || audit.FormatPublicKey(fromFile) != want {
		t.Errorf("the signing key in the data directory gives %v, %v; want the configured key", fromFile, err)
	}
	sa, err := seal.LoadOrCreate(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := seal.LoadOrCreate(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sb.Open(sa.Seal([]byte("acct 12345678"), "act_1"), "act_1"); err != nil || string(got) != "acct 12345678" {
		t.Errorf("replica B opens what replica A sealed: %q, %v", got, err)
	}
	ra, _ := redact.LoadOrCreateKey(a)
	rb, _ := redact.LoadOrCreateKey(b)
	if hex.EncodeToString(ra) != redaction || hex.EncodeToString(rb) != redaction {
		t.Errorf("redaction keys %x and %x; want both the configured %s", ra, rb, redaction)
	}

	// A directory with a sealing key of its own is refused, unchanged.
	c := newInstall()
	mine := []byte(strings.Repeat("k", 32))
	os.WriteFile(filepath.Join(c, "sealing.key"), mine, 0o600)
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "bot", "--scopes", "skill:order_status"}, envFor(c), &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "WARDEN_SEALING_KEY differs") {
		t.Errorf("keys create with another sealing key in the directory = %d, %q; want a refusal naming WARDEN_SEALING_KEY", code, errb.String())
	}
	if got, _ := os.ReadFile(filepath.Join(c, "sealing.key")); !bytes.Equal(got, mine) {
		t.Error("the refused start replaced the directory's sealing key")
	}
}

// Installing a key into a directory others can write to is refused
// before the key is written: whoever can write there could replace it.
func TestInstallKeysRefusesADataDirOthersCanWrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	err := installKeys(dir, config.Config{SealingKey: bytes.Repeat([]byte{1}, 32)})
	if err == nil || !strings.Contains(err.Error(), "WARDEN_DATA_DIR "+dir+" is mode 0777") {
		t.Fatalf("installKeys into a 0777 directory = %v, want it refused naming WARDEN_DATA_DIR and the mode", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sealing.key")); !os.IsNotExist(err) {
		t.Errorf("sealing.key was written into the 0777 directory (%v)", err)
	}
}
