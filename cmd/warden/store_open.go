package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/platform/store"
)

// errNoDatabase is openStore's error when SQLite is configured and the
// data directory has no database yet.
var errNoDatabase = errors.New("no database")

// openStore opens the store the configuration names, the one way serve
// and every operator command open it: PostgreSQL when
// WARDEN_DATABASE_URL is set (with the WARDEN_DB_* settings), otherwise
// warden.db in dataDir. Commands other than serve pass mustExist, so that
// a mistyped data directory is reported instead of creating an empty
// database; readOnly opens without migrating and refuses every write.
func openStore(ctx context.Context, dataDir string, cfg config.Config, mustExist, readOnly bool) (*store.DB, error) {
	if cfg.DatabaseURL == "" {
		path := filepath.Join(dataDir, "warden.db")
		if mustExist {
			if _, err := os.Stat(path); err != nil {
				return nil, fmt.Errorf("%w at %s (WARDEN_DATA_DIR, --data-dir; or set WARDEN_DATABASE_URL): %v", errNoDatabase, path, err)
			}
		}
		if readOnly {
			return store.OpenReadOnly(ctx, path)
		}
		return store.Open(ctx, path)
	}
	return store.OpenURL(ctx, cfg.DatabaseURL, store.Options{
		DataDir:          dataDir,
		MaxConns:         cfg.DBMaxConns,
		StatementTimeout: cfg.DBStatementTimeout,
		ConnectTimeout:   cfg.DBConnectTimeout,
		ReadOnly:         readOnly,
	})
}

// openCommandStore is openStore for an operator command: it reads the
// database settings from env and opens the existing store in dataDir.
func openCommandStore(ctx context.Context, dataDir string, env func(string) (string, bool), readOnly bool) (*store.DB, error) {
	cfg, err := config.LoadCommand(env)
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	if !readOnly {
		if err := installKeys(dataDir, cfg); err != nil {
			return nil, err
		}
	}
	return openStore(ctx, dataDir, cfg, true, readOnly)
}
