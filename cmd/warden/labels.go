package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/releases"
)

const labelsUsage = "usage: warden labels export --out PATH [--agent A] [--env E] [--data-dir DIR]"

// labelsCmd runs "warden labels export": it writes the agent's labelled
// journeys (route labels, docs/releases.md) as JSON lines to PATH for
// offline evaluation — the redacted input, the route, the label and the
// release digest of each, never the reviewer.
func labelsCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, labelsUsage)
		return 2
	}
	fs := flag.NewFlagSet("warden labels export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := "./warden-data"
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		dir = v
	}
	fs.StringVar(&dir, "data-dir", dir, "data directory (WARDEN_DATA_DIR)")
	agent := fs.String("agent", releases.DefaultAgent, "the agent whose labels to export")
	envName := fs.String("env", releases.DefaultEnv, "the environment")
	out := fs.String("out", "", "the file to write (JSON lines)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, labelsUsage)
		return 2
	}
	db, err := openCommandStore(ctx, dir, env, false)
	if errors.Is(err, errNoDatabase) {
		fmt.Fprintf(stderr, "warden labels export: %v; start warden once first\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden labels export: %v\n", err)
		return 1
	}
	defer db.Close()
	key, err := redact.LoadOrCreateKey(dir)
	if err != nil {
		fmt.Fprintf(stderr, "warden labels export: %v\n", err)
		return 1
	}
	var n int
	err = writeAtomically(*out, func(w io.Writer) error {
		n, err = journeys.ExportLabels(ctx, db.Read(), redact.New(key), w, *agent, *envName, nil)
		return err
	})
	if err != nil {
		fmt.Fprintf(stderr, "warden labels export: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Wrote %d labelled journeys of %s in %s to %s.\n", n, *agent, *envName, *out)
	return 0
}
