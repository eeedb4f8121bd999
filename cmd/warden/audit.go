package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
)

// auditCmd runs the audit subcommands. They read WARDEN_DATA_DIR like serve.
func auditCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "export" || args[0] == "verify-export") {
		return auditExportCmd(ctx, args, env, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: warden audit verify [--data-dir DIR]")
		return 2
	}
	dir := "./warden-data"
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		dir = v
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case (a == "--data-dir" || a == "-data-dir") && i+1 < len(rest):
			dir = rest[i+1]
			i++
		default:
			fmt.Fprintf(stderr, "warden audit verify: unexpected argument %q\n", a)
			return 2
		}
	}
	path := filepath.Join(dir, "warden.db")
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "warden audit verify: no database at %s (WARDEN_DATA_DIR)\n", path)
		return 2
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		fmt.Fprintf(stderr, "warden audit verify: %v\n", err)
		return 1
	}
	defer db.Close()
	head, err := audit.Verify(ctx, db.Read(), nil)
	var ce *audit.ChainError
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "audit chain intact: %d events, head %s\n", head.Seq, head.Hash)
		return 0
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "audit chain BROKEN at seq %d: %s\n", ce.Seq, ce.Reason)
		return 1
	default:
		fmt.Fprintf(stderr, "warden audit verify: %v\n", err)
		return 1
	}
}
