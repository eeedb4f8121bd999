package audit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// signingKeyFile holds the installation's audit signing key (an Ed25519
// seed) in the data directory, 0600. It signs checkpoints and export
// manifests; its public key lets anyone verify them without the database.
const signingKeyFile = "audit-signing.key"

// Signer signs audit checkpoints and export manifests.
type Signer struct {
	key ed25519.PrivateKey
}

// LoadOrCreateSigner returns the installation's signer, creating its key
// (0600) on first use.
func LoadOrCreateSigner(dir string) (*Signer, error) {
	path := filepath.Join(dir, signingKeyFile)
	seed, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		seed = make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, fmt.Errorf("audit signing key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreateSigner(dir) // another process created it first
		}
		if err != nil {
			return nil, fmt.Errorf("create audit signing key: %w", err)
		}
		if _, err := f.Write(seed); err != nil {
			f.Close()
			return nil, fmt.Errorf("write audit signing key: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("write audit signing key: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read audit signing key: %w", err)
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("audit signing key %s: want %d bytes, found %d", path, ed25519.SeedSize, len(seed))
	}
	return &Signer{key: ed25519.NewKeyFromSeed(seed)}, nil
}

// NewSigner wraps an existing key (tests).
func NewSigner(key ed25519.PrivateKey) *Signer { return &Signer{key: key} }

// Sign signs msg.
func (s *Signer) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

// PublicKey is the key that verifies the signatures.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// PublicKeyText is the public key as `warden audit pubkey` prints it and
// the audit page shows it: "ed25519:" and the key in standard base64.
func (s *Signer) PublicKeyText() string { return FormatPublicKey(s.PublicKey()) }

// FormatPublicKey writes a public key as "ed25519:<base64>".
func FormatPublicKey(k ed25519.PublicKey) string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(k)
}

// ParsePublicKey reads "ed25519:<base64>" (or the bare base64).
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	if len(s) > 8 && s[:8] == "ed25519:" {
		s = s[8:]
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("not an Ed25519 public key (want ed25519:<base64 of 32 bytes>)")
	}
	return ed25519.PublicKey(raw), nil
}
