// Package seal encrypts values Warden must keep but must not store in the
// clear, such as the arguments of a pending action (they carry account
// numbers and e-mail addresses the executing job needs). AES-256-GCM under
// a per-installation key kept in the data directory with mode 0600.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	keyFile = "sealing.key"
	version = "v1:"
)

// Sealer seals and opens values.
type Sealer struct{ aead cipher.AEAD }

// New returns a sealer for a 32-byte key.
func New(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("sealing key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// LoadOrCreate returns the sealer whose key is kept in dir, creating the
// key (0600) on first use.
func LoadOrCreate(dir string) (*Sealer, error) {
	path := filepath.Join(dir, keyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create sealing key: %w", err)
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, fmt.Errorf("write sealing key: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("write sealing key: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read sealing key: %w", err)
	}
	return New(key)
}

// Seal encrypts plaintext; aad binds it to its context (such as the action
// id) so a sealed value cannot be moved to another row.
func (s *Sealer) Seal(plaintext []byte, aad string) string {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	out := s.aead.Seal(nonce, nonce, plaintext, []byte(aad))
	return version + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts what Seal produced with the same aad.
func (s *Sealer) Open(sealed, aad string) ([]byte, error) {
	raw, ok := strings.CutPrefix(sealed, version)
	if !ok {
		return nil, errors.New("open sealed value: unknown format")
	}
	b, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil || len(b) < s.aead.NonceSize() {
		return nil, errors.New("open sealed value: damaged")
	}
	n := s.aead.NonceSize()
	pt, err := s.aead.Open(nil, b[:n], b[n:], []byte(aad))
	if err != nil {
		return nil, errors.New("open sealed value: wrong key or tampered")
	}
	return pt, nil
}
