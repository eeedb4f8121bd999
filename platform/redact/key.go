package redact

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// KeyFile is the file in the data directory that holds the installation's
// redaction key.
const KeyFile = "redaction.key"

// KeySize is the length of a redaction key in bytes.
const KeySize = 32

// LoadOrCreateKey returns the installation's redaction key, kept as 32
// random bytes in dataDir/redaction.key with mode 0600. It creates the
// directory and the key when they do not exist. A key file that is not
// exactly 32 bytes is refused rather than replaced: replacing it would
// silently break correlation with every token written before. A key file
// that other users may read has its mode tightened to 0600.
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create redaction key: %w", err)
	}
	key = make([]byte, KeySize)
	rand.Read(key) // never fails: crypto/rand.Read crashes the program instead
	if err := writeKey(path, key); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path) // another process created it first
		}
		return nil, fmt.Errorf("create redaction key: %w", err)
	}
	return key, nil
}

// writeKey writes key to a temporary file and links it to path, so that
// path never holds a partial key and an existing key is never replaced.
func writeKey(path string, key []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".redaction.key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// A file system without hard links: create exclusively instead.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read redaction key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read redaction key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read redaction key: %s is not a regular file", path)
	}
	if fi.Size() != KeySize {
		return nil, fmt.Errorf("read redaction key: %s is %d bytes, want %d; restore it from a backup, or remove it to start a new key (tokens written before will no longer correlate)", path, fi.Size(), KeySize)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return nil, fmt.Errorf("read redaction key: %s has mode %04o and cannot be made 0600: %w", path, fi.Mode().Perm(), err)
		}
	}
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("read redaction key: %w", err)
	}
	return key, nil
}
