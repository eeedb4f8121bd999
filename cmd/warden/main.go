// Command warden is the Warden binary: the console and API server and its
// operator subcommands.
//
//	warden [serve] [flags]   start the console (the default)
//	warden audit verify      check the audit chain and its signed checkpoints, read-only;
//	                         exit 0 intact, 1 broken naming the first bad seq, 2 could not read
//	warden audit pubkey      print the installation's public key
//	warden keys create       create a virtual key and print it and its callback secret once
//	warden release publish   publish a release bundle (and --activate it); print its digest
//	warden migrate-store     copy a SQLite installation into an empty PostgreSQL database
//	warden version           print the version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wardenhq/warden/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, env, stdout, stderr)
	case "audit":
		return auditCmd(ctx, args, env, stdout, stderr)
	case "keys":
		return keysCmd(ctx, args, env, stdout, stderr)
	case "notify":
		return notifyCmd(ctx, args, env, stdout, stderr)
	case "release":
		return releaseCmd(ctx, args, env, stdout, stderr)
	case "labels":
		return labelsCmd(ctx, args, env, stdout, stderr)
	case "migrate-store":
		return migrateStoreCmd(ctx, args, env, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "warden %s\n", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "warden: unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  warden [serve] [flags]   start the console and API (default)
  warden audit verify      verify the audit chain and its signed checkpoints
                           (exit 0 intact, 1 broken, 2 could not read; see warden audit help)
  warden audit pubkey      print the public key that verifies checkpoints and exports
  warden keys create       create a virtual key and print it and its callback secret once
  warden notify test CHANNEL
                           send a test message to a notification channel now
  warden release publish FILE [--agent A] [--env E] [--activate] [--note N]
                           publish a release bundle (JSON) and print its digest
  warden labels export --out PATH [--agent A] [--env E]
                           write the labelled journeys (redacted) as JSON lines
  warden migrate-store --from sqlite:PATH --to postgres://…
                           copy an installation into an empty PostgreSQL database,
                           then verify its audit chain and row counts there
  warden version           print the version

`)
	fmt.Fprint(w, config.Usage())
}

// loadConfig loads the configuration and prints every bad setting.
func loadConfig(args []string, env func(string) (string, bool), stderr io.Writer) (config.Config, bool) {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			usage(stderr)
			return config.Config{}, false
		}
	}
	cfg, err := config.Load(args, env)
	if err != nil {
		fmt.Fprintln(stderr, "warden: invalid configuration:")
		var joined interface{ Unwrap() []error }
		if errors.As(err, &joined) {
			for _, e := range joined.Unwrap() {
				fmt.Fprintf(stderr, "  %v\n", e)
			}
		} else {
			fmt.Fprintf(stderr, "  %v\n", err)
		}
		return config.Config{}, false
	}
	return cfg, true
}
