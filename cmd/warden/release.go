package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
)

const releaseUsage = "usage: warden release publish FILE [--agent A] [--env E] [--activate] [--note N] [--data-dir DIR]"

// releaseCmd runs "warden release publish FILE": it publishes the bundle
// in FILE (a JSON object of the surfaces, docs/releases.md) and prints
// its digest on stdout. With --activate it also makes it the agent's
// active release in the environment; a running Warden's next journeys run
// under it, since admission reads the pointer from the database.
func releaseCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "publish" {
		fmt.Fprintln(stderr, releaseUsage)
		return 2
	}
	args = args[1:]
	var file string
	if len(args) > 0 && !isFlag(args[0]) {
		file, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("warden release publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := "./warden-data"
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		dir = v
	}
	fs.StringVar(&dir, "data-dir", dir, "data directory (WARDEN_DATA_DIR)")
	agent := fs.String("agent", releases.DefaultAgent, "the agent whose release to activate")
	envName := fs.String("env", releases.DefaultEnv, "the environment")
	activate := fs.Bool("activate", false, "make the bundle the active release of the agent in the environment")
	note := fs.String("note", "", "why: kept with the bundle and, with --activate, in the release history")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintln(stderr, releaseUsage)
		return 2
	}
	if file == "" {
		fmt.Fprintln(stderr, releaseUsage)
		return 2
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "warden release publish: %v\n", err)
		return 2
	}
	b, contents, err := releases.Parse(raw)
	if err != nil {
		printReleaseError(stderr, err)
		return 2
	}
	db, err := openCommandStore(ctx, dir, env, false)
	if errors.Is(err, errNoDatabase) {
		fmt.Fprintf(stderr, "warden release publish: %v; start warden once first\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden release publish: %v\n", err)
		return 1
	}
	defer db.Close()
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorSystem, ID: "cli"}, Name: "warden CLI"}
	digest, created, err := releases.Publish(ctx, db, by, b, contents, *note)
	if err != nil {
		printReleaseError(stderr, err)
		return 1
	}
	if !created {
		fmt.Fprintln(stderr, "This bundle was published before; nothing new was stored.")
	}
	if *activate {
		_, changed, err := releases.Activate(ctx, db, by, *agent, *envName, digest, *note)
		if err != nil {
			printReleaseError(stderr, err)
			return 1
		}
		if changed {
			fmt.Fprintf(stderr, "Activated for %s in %s.\n", *agent, *envName)
		} else {
			fmt.Fprintf(stderr, "Already active for %s in %s; nothing changed.\n", *agent, *envName)
		}
	}
	fmt.Fprintln(stdout, digest)
	return 0
}

func printReleaseError(w io.Writer, err error) {
	var inv *store.ValidationError
	var p *problem.Error
	switch {
	case errors.As(err, &inv):
		fields := make([]string, 0, len(inv.Fields))
		for f := range inv.Fields {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			fmt.Fprintf(w, "warden release publish: %s: %s\n", f, inv.Fields[f])
		}
	case errors.As(err, &p):
		fmt.Fprintf(w, "warden release publish: %s\n", p.Message)
	default:
		fmt.Fprintf(w, "warden release publish: %v\n", err)
	}
}
