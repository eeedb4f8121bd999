package main

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/config"
)

// installKeys puts the installation keys given as settings
// (WARDEN_SEALING_KEY, WARDEN_REDACTION_KEY, WARDEN_AUDIT_SIGNING_KEY, or
// their _FILE forms) into the data directory, where every part of Warden
// that uses them reads them: replicas given the same settings then seal,
// redact and sign alike. A key already in the directory must be the same:
// a different one is refused, since replacing it would make what it
// sealed unreadable, its tokens uncorrelated or its signatures
// unverifiable. A directory others can write to is refused before any
// key is written into it (config.CheckDataDir), as serve refuses it.
func installKeys(dataDir string, cfg config.Config) error {
	if _, err := os.Stat(dataDir); err == nil {
		if err := config.CheckDataDir(dataDir); err != nil {
			return err
		}
	}
	for _, k := range []struct {
		setting, file string
		key           []byte
	}{
		{"WARDEN_SEALING_KEY", "sealing.key", cfg.SealingKey},
		{"WARDEN_REDACTION_KEY", "redaction.key", cfg.RedactionKey},
		{"WARDEN_AUDIT_SIGNING_KEY", "audit-signing.key", cfg.AuditSigningKey},
	} {
		if len(k.key) == 0 {
			continue
		}
		path := filepath.Join(dataDir, k.file)
		have, err := os.ReadFile(path)
		switch {
		case err == nil && bytes.Equal(have, k.key):
			continue
		case err == nil:
			return fmt.Errorf("%s differs from the key in %s; a replica must use the key the installation was started with. "+
				"Set %s to that key (hex), or move %s away if the installation has never used it", k.setting, path, k.setting, k.file)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("read %s: %w", path, err)
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return installKeys(dataDir, cfg) // another process wrote it first: compare
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		_, err = f.Write(k.key)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// configuredPublicKey is the public key of WARDEN_AUDIT_SIGNING_KEY, or
// nil when it is not set.
func configuredPublicKey(env func(string) (string, bool)) (ed25519.PublicKey, error) {
	cfg, err := config.LoadCommand(env)
	if err != nil || len(cfg.AuditSigningKey) == 0 {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(cfg.AuditSigningKey).Public().(ed25519.PublicKey), nil
}
