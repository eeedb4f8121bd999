package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/seal"
)

// notifyCmd runs "warden notify test CHANNEL": it sends a test message to
// a notification channel now, as the Notifications page's Send test does,
// and says whether the channel accepted it (exit 0) or why not (exit 1).
// It reads WARDEN_DATA_DIR like serve; channels may reach internal
// addresses only in development mode (no WARDEN_OIDC_ISSUER), as there.
func notifyCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	const usage = "usage: warden notify test CHANNEL [--data-dir DIR]"
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("warden notify test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := "./warden-data"
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		dir = v
	}
	fs.StringVar(&dir, "data-dir", dir, "data directory (WARDEN_DATA_DIR)")
	// The channel's name comes first or after the flags.
	rest := args[1:]
	var name string
	if len(rest) > 0 && !isFlag(rest[0]) {
		name, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	if name == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	db, err := openCommandStore(ctx, dir, env, false)
	if errors.Is(err, errNoDatabase) {
		fmt.Fprintf(stderr, "warden notify test: %v; start warden once first\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden notify test: %v\n", err)
		return 1
	}
	defer db.Close()
	sealer, err := seal.LoadOrCreate(dir)
	if err != nil {
		fmt.Fprintf(stderr, "warden notify test: %v\n", err)
		return 1
	}
	base := "http://127.0.0.1:8080"
	if v, ok := env("WARDEN_PUBLIC_URL"); ok && v != "" {
		base = v
	}
	issuer, _ := env("WARDEN_OIDC_ISSUER")
	svc := notify.New(notify.Options{DB: db, Sealer: sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), BaseURL: base, AllowInternal: issuer == ""})
	res, err := svc.SendTest(ctx, audit.Actor{Type: audit.ActorSystem, ID: "cli"}, name)
	if errors.Is(err, notify.ErrNotFound) {
		fmt.Fprintf(stderr, "warden notify test: no channel %q\n", name)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden notify test: %v\n", err)
		return 1
	}
	if res.Err != nil {
		fmt.Fprintf(stderr, "warden notify test: %s did not accept the test message: %v\n", name, res.Err)
		return 1
	}
	fmt.Fprintf(stdout, "%s accepted the test message %s\n", name, res.MessageID)
	return 0
}
