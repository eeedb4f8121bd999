package main

import (
	"io"
	"log/slog"

	"github.com/wardenhq/warden/platform/redact"
)

// newLogger builds the process logger. Every record passes through the
// redacting handler before it is written: it is the only handler Warden
// logs through.
func newLogger(dataDir string, w io.Writer) (*slog.Logger, *redact.Redactor, error) {
	key, err := redact.LoadOrCreateKey(dataDir)
	if err != nil {
		return nil, nil, err
	}
	r := redact.New(key)
	h := redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}), r)
	logger := slog.New(h)
	slog.SetDefault(logger)
	return logger, r, nil
}
