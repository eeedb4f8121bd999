package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/audit"
)

// Exit codes of warden audit verify. "Could not read" is kept apart from
// "broken" so that a script never mistakes a missing file for tampering,
// or tampering for a missing file.
const (
	exitIntact     = 0
	exitBroken     = 1
	exitCannotRead = 2 // also bad usage
)

const auditUsage = `Usage:
  warden audit verify [--data-dir DIR] [--pubkey KEY] [--head SEQ HASH]
      Check the audit chain and its signed checkpoints, reading the database
      read-only. Exit 0 intact, 1 broken (naming the first bad seq), 2 could
      not read. --pubkey is the installation's public key as "warden audit
      pubkey" printed it (default: the one of DIR/audit-signing.key);
      --head is a head kept outside the database, such as one a previous
      verification printed: the chain must reach seq SEQ and have HASH there.
  warden audit pubkey [--data-dir DIR]
      Print the installation's public key, which verifies checkpoints and
      export manifests.
  warden audit export --format jsonl|csv --out PATH [--tenant T] [--actor A]
      [--verb V] [--subject-type T] [--subject-id I] [--since T] [--until T]
      Write the events (all, or those the filters select) to PATH and a
      signed manifest to PATH.manifest.json.
  warden audit verify-export EXPORT MANIFEST [--pubkey KEY]
      Check an export against its manifest without the database.

DIR defaults to WARDEN_DATA_DIR, else ./warden-data.
`

// auditCmd runs the audit subcommands. They read WARDEN_DATA_DIR like serve.
func auditCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "export" || args[0] == "verify-export") {
		return auditExportCmd(ctx, args, env, stdout, stderr)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return exitCannotRead
	}
	switch args[0] {
	case "verify":
		return auditVerify(ctx, args[1:], env, stdout, stderr)
	case "pubkey":
		return auditPubkey(args[1:], env, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, auditUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "warden audit: unknown command %q\n\n%s", args[0], auditUsage)
		return exitCannotRead
	}
}

// auditFlags are the options of the audit subcommands.
type auditFlags struct {
	dir    string
	pubkey string // --pubkey, as given
	head   *audit.Head
}

// parseAuditFlags reads the options allowed lists ("data-dir", "pubkey",
// "head").
func parseAuditFlags(cmd string, args []string, env func(string) (string, bool), allowed ...string) (auditFlags, error) {
	f := auditFlags{dir: "./warden-data"}
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		f.dir = v
	}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || !slices.Contains(allowed, name) {
			return f, fmt.Errorf("warden audit %s: unexpected argument %q", cmd, args[i])
		}
		want := 1
		if name == "head" {
			want = 2
		}
		var values []string
		if hasValue {
			values = append(values, value)
		}
		for len(values) < want && i+1 < len(args) {
			i++
			values = append(values, args[i])
		}
		if len(values) != want {
			return f, fmt.Errorf("warden audit %s: --%s needs %d value(s)", cmd, name, want)
		}
		switch name {
		case "data-dir":
			f.dir = values[0]
		case "pubkey":
			f.pubkey = values[0]
		case "head":
			seq, err := strconv.ParseInt(values[0], 10, 64)
			if err != nil || seq < 0 {
				return f, fmt.Errorf("warden audit %s: --head seq %q is not a whole number", cmd, values[0])
			}
			f.head = &audit.Head{Seq: seq, Hash: strings.ToLower(values[1])}
		}
	}
	return f, nil
}

// auditVerify verifies the chain of the database in the data directory,
// opened read-only: it works on a copy in a read-only directory and never
// changes the file.
func auditVerify(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	f, err := parseAuditFlags("verify", args, env, "data-dir", "pubkey", "head")
	if err != nil {
		fmt.Fprintf(stderr, "%v\n\n%s", err, auditUsage)
		return exitCannotRead
	}
	cannot := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "warden audit verify: could not verify: "+format+"\n", a...)
		return exitCannotRead
	}

	var key ed25519.PublicKey
	if f.pubkey != "" {
		if key, err = audit.ParsePublicKey(f.pubkey); err != nil {
			return cannot("--pubkey: %v", err)
		}
	} else if key, err = configuredPublicKey(env); err != nil {
		return cannot("%v", err)
	} else if key == nil {
		if key, err = audit.LoadPublicKey(f.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return cannot("%v", err)
		}
	}

	db, err := openCommandStore(ctx, f.dir, env, true)
	if err != nil {
		return cannot("%v", err)
	}
	defer db.Close()

	head, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: key, Head: f.head})
	var ce *audit.ChainError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "audit chain BROKEN at seq %d: %s\n", ce.Seq, ce.Reason)
		fmt.Fprintf(stderr, "events 1 to %d are intact (head %d %s); nothing from seq %d on can be trusted\n",
			head.Seq, head.Seq, head.Hash, ce.Seq)
		return exitBroken
	case errors.Is(err, audit.ErrNoPublicKey):
		return cannot("the database holds signed checkpoints and there is no %s in %s to check them with; "+
			"pass --pubkey with the key \"warden audit pubkey\" printed", "audit-signing.key", f.dir)
	case err != nil:
		return cannot("%v", err)
	}

	fmt.Fprintf(stdout, "audit chain intact: %d events, head %d %s\n", head.Seq, head.Seq, head.Hash)
	cps, err := audit.Checkpoints(ctx, db.Read())
	if err != nil {
		return cannot("%v", err)
	}
	if n := len(cps); n > 0 {
		newest := cps[n-1]
		fmt.Fprintf(stdout, "agrees with %d signed checkpoint(s); the newest, of seq %d, was signed at %s by %s\n",
			n, newest.Seq, newest.Time.Format(audit.TimeFormat), audit.FormatPublicKey(key))
	} else {
		fmt.Fprintln(stdout, "no signed checkpoints yet: events cut from the end would not show")
	}
	if f.head != nil {
		fmt.Fprintf(stdout, "agrees with the trusted head %d %s\n", f.head.Seq, f.head.Hash)
	}
	return exitIntact
}

// auditPubkey prints the installation's public key. It reads the signing
// key and never creates one.
func auditPubkey(args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	f, err := parseAuditFlags("pubkey", args, env, "data-dir")
	if err != nil {
		fmt.Fprintf(stderr, "%v\n\n%s", err, auditUsage)
		return exitCannotRead
	}
	key, err := configuredPublicKey(env)
	if key == nil && err == nil {
		key, err = audit.LoadPublicKey(f.dir)
	}
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "warden audit pubkey: no audit signing key in %s (warden serve creates it on its first start)\n", f.dir)
		return exitCannotRead
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden audit pubkey: %v\n", err)
		return exitCannotRead
	}
	fmt.Fprintln(stdout, audit.FormatPublicKey(key))
	return 0
}
