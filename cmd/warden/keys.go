package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// keysCmd runs "warden keys create": it creates a virtual key from the
// shell and prints its secrets once, each on its own line of stdout: the
// key, then its callback secret. It reads WARDEN_DATA_DIR like serve, and
// seals the callback secret with the installation's key kept there.
func keysCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stderr, "usage: warden keys create --tenant SLUG --name NAME --scopes skill:X,tool:Y [--rate-per-min N] [--burst N] [--expires YYYY-MM-DD] [--data-dir DIR]")
		return 2
	}
	fs := flag.NewFlagSet("warden keys create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := "./warden-data"
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		dir = v
	}
	fs.StringVar(&dir, "data-dir", dir, "data directory (WARDEN_DATA_DIR)")
	tenant := fs.String("tenant", "", "tenant slug")
	name := fs.String("name", "", "what the key is for")
	scopes := fs.String("scopes", "", "comma-separated scopes: skill:NAME and tool:NAME")
	perMin := fs.Int("rate-per-min", 600, "requests a minute")
	burst := fs.Int("burst", 60, "requests at once")
	expires := fs.String("expires", "", "expiry date (UTC), YYYY-MM-DD; empty for none")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	db, err := openCommandStore(ctx, dir, env, false)
	if errors.Is(err, errNoDatabase) {
		fmt.Fprintf(stderr, "warden keys create: %v; start warden once first\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden keys create: %v\n", err)
		return 1
	}
	defer db.Close()

	t, err := tenants.BySlug(ctx, db.Read(), *tenant)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(stderr, "warden keys create: --tenant: no tenant %q\n", *tenant)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden keys create: %v\n", err)
		return 1
	}
	spec := keys.NewSpec{TenantID: t.ID, Name: *name, RatePerMin: *perMin, Burst: *burst, CreatedBy: "cli"}
	for _, s := range strings.Split(*scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			spec.Scopes = append(spec.Scopes, s)
		}
	}
	if *expires != "" {
		d, err := time.Parse("2006-01-02", *expires)
		if err != nil {
			fmt.Fprintf(stderr, "warden keys create: --expires: %q is not a date like 2027-01-31\n", *expires)
			return 2
		}
		spec.ExpiresAt = &d
	}
	if errs := spec.Validate(time.Now()); len(errs) > 0 {
		fields := make([]string, 0, len(errs))
		for f := range errs {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			fmt.Fprintf(stderr, "warden keys create: --%s: %s\n", strings.ReplaceAll(f, "_", "-"), errs[f])
		}
		return 2
	}
	sealer, err := seal.LoadOrCreate(dir)
	if err != nil {
		fmt.Fprintf(stderr, "warden keys create: %v\n", err)
		return 1
	}
	var secrets keys.Secrets
	err = db.Transact(ctx, func(tx *store.Tx) error {
		k, s, err := keys.Create(ctx, tx, sealer, spec)
		if err != nil {
			return err
		}
		secrets = s
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorSystem, ID: "cli"},
			Tenant:  t.Slug,
			Verb:    "key.create",
			Subject: audit.Subject{Type: "key", ID: k.ID},
			Details: map[string]any{"name": k.Name, "prefix": k.Prefix, "scopes": k.Scopes},
		})
		return err
	})
	if err != nil {
		fmt.Fprintf(stderr, "warden keys create: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n%s\n", secrets.Key, secrets.Callback)
	fmt.Fprintln(stderr, "Line 1 is the key (Authorization: Bearer …); line 2 is its callback secret, with which the agent verifies Warden's callbacks (X-Warden-Signature).")
	fmt.Fprintln(stderr, "Both are shown once and cannot be retrieved again. Store them now.")
	return 0
}
