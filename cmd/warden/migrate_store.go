package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/platform/store"
)

const migrateStoreUsage = `usage: warden migrate-store --from sqlite:PATH --to postgres://… [--batch N] [--pubkey KEY]

Copies a stopped SQLite installation (PATH is its warden.db) into an empty
PostgreSQL database: every table in foreign-key order, the audit chain
unchanged, BATCH rows per transaction. It then verifies the audit chain on
the target, as warden audit verify does, and compares the row counts of
every table. The data directory beside PATH keeps the installation's keys;
replicas on PostgreSQL need them too (docs/deploy.md).
`

// migrateStoreCmd runs "warden migrate-store". Exit 0 copied and verified,
// 1 failed during or after the copy, 2 refused before writing anything
// (usage, a bad URL, a non-empty target, a schema version other than this
// binary's).
func migrateStoreCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("warden migrate-store", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "sqlite:PATH of the source database (warden.db)")
	to := fs.String("to", "", "postgres:// URL of the empty target database")
	batch := fs.Int("batch", 500, "rows copied per transaction")
	pubkey := fs.String("pubkey", "", `public key that checks the audit checkpoints (default: that of the source's data directory, as "warden audit pubkey" prints it)`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	refuse := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "warden migrate-store: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return refuse("unexpected argument %q\n\n%s", fs.Arg(0), migrateStoreUsage)
	}
	path, ok := strings.CutPrefix(*from, "sqlite:")
	if !ok || path == "" {
		return refuse("--from: want sqlite:PATH naming the installation's warden.db, got %q\n\n%s", *from, migrateStoreUsage)
	}
	if !store.IsPostgresURL(*to) {
		return refuse("--to: want a postgres:// URL of an empty database, got %q", redactURL(*to))
	}
	if *batch < 1 || *batch > 100000 {
		return refuse("--batch: want a whole number from 1 to 100000")
	}
	if _, err := os.Stat(path); err != nil {
		return refuse("--from: no database at %s: %v", path, err)
	}
	dataDir := filepath.Dir(path)
	var key ed25519.PublicKey
	var err error
	if *pubkey != "" {
		if key, err = audit.ParsePublicKey(*pubkey); err != nil {
			return refuse("--pubkey: %v", err)
		}
	} else if key, err = configuredPublicKey(env); err != nil {
		return refuse("%v", err)
	} else if key == nil {
		if key, err = audit.LoadPublicKey(dataDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return refuse("%v", err)
		}
	}

	dbCfg, err := loadDatabaseSettings(env)
	if err != nil {
		return refuse("%v", err)
	}
	src, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		return refuse("--from: %v", err)
	}
	defer src.Close()
	have, err := src.SchemaVersion(ctx)
	if err != nil {
		return refuse("--from: read the schema version: %v", err)
	}
	if want := store.LatestVersion(store.SQLite); have != want {
		return refuse("--from: the source's schema is at version %d and this binary's at %d; "+
			"start and stop this version of warden on the source first (it migrates), or use the binary that matches it", have, want)
	}
	// The source's own chain must be intact: a copy of a broken chain
	// would verify as broken on the target and prove nothing.
	srcHead, err := audit.Verify(ctx, src.Read(), &audit.Trust{Key: key})
	if err != nil {
		return refuse("--from: the source's audit chain does not verify: %v", err)
	}

	opts := store.Options{DataDir: dataDir, MaxConns: max(2, dbCfg.DBMaxConns), StatementTimeout: 0, ConnectTimeout: dbCfg.DBConnectTimeout}
	// Look before migrating: a target that holds rows is refused
	// untouched, and one whose schema is newer than this binary's too.
	ro := opts
	ro.ReadOnly = true
	probe, err := store.OpenURL(ctx, *to, ro)
	if err != nil {
		return refuse("--to: %v", err)
	}
	err = store.CheckEmptyTarget(ctx, probe)
	if err == nil {
		var v int
		if v, err = probe.SchemaVersion(ctx); err == nil && v > store.LatestVersion(store.Postgres) {
			err = fmt.Errorf("its schema is at version %d, newer than this binary's %d", v, store.LatestVersion(store.Postgres))
		} else if err != nil && !isUndefinedTable(err) {
			err = fmt.Errorf("read the schema version: %w", err)
		} else {
			err = nil
		}
	}
	probe.Close()
	if err != nil {
		return refuse("--to: %v", err)
	}

	fmt.Fprintf(stdout, "source %s: schema %d, %d audit events, chain intact\n", path, have, srcHead.Seq)
	begin := time.Now()
	dst, err := store.OpenURL(ctx, *to, opts)
	if err != nil {
		fmt.Fprintf(stderr, "warden migrate-store: --to: %v\n", err)
		return 1
	}
	defer dst.Close()
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "warden migrate-store: "+format+"\n", a...)
		fmt.Fprintln(stderr, "The target is incomplete: drop it and create a new, empty database before trying again.")
		return 1
	}
	copied, err := store.CopyAll(ctx, src, dst, *batch, func(t store.CopyTable) {
		fmt.Fprintf(stdout, "copied %-28s %8d rows\n", t.Name, t.Source)
	})
	if err != nil {
		return fail("%v", err)
	}

	dstHead, err := audit.Verify(ctx, dst.Read(), &audit.Trust{Key: key, Head: &srcHead})
	if err != nil {
		return fail("the audit chain does not verify on the target: %v", err)
	}
	names := make([]string, len(copied))
	for i, t := range copied {
		names[i] = t.Name
	}
	srcCounts, err := store.CountRows(ctx, src, names)
	if err != nil {
		return fail("%v", err)
	}
	dstCounts, err := store.CountRows(ctx, dst, names)
	if err != nil {
		return fail("%v", err)
	}
	var total int64
	for _, n := range names {
		if srcCounts[n] != dstCounts[n] {
			return fail("table %s: %d rows in the source, %d on the target", n, srcCounts[n], dstCounts[n])
		}
		total += dstCounts[n]
	}
	fmt.Fprintf(stdout, "audit chain intact on the target: %d events, head %d %s (the source's head)\n", dstHead.Seq, dstHead.Seq, dstHead.Hash)
	fmt.Fprintf(stdout, "row counts match in all %d tables (%d rows); copied in %s\n", len(names), total, time.Since(begin).Round(time.Millisecond))
	fmt.Fprintf(stdout, "Done. Start warden with WARDEN_DATABASE_URL set to the target and the keys of %s (docs/deploy.md).\n", dataDir)
	return 0
}

// loadDatabaseSettings reads WARDEN_DB_* for the target's pool.
func loadDatabaseSettings(env func(string) (string, bool)) (cfg struct {
	DBMaxConns       int
	DBConnectTimeout time.Duration
}, err error) {
	c, err := config.LoadCommand(env)
	cfg.DBMaxConns, cfg.DBConnectTimeout = c.DBMaxConns, c.DBConnectTimeout
	return cfg, err
}

// isUndefinedTable reports a missing table (a target never migrated has
// no schema_migrations).
func isUndefinedTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "SQLSTATE 42P01")
}

// redactURL hides a password in a database URL for messages.
func redactURL(s string) string {
	if at := strings.LastIndex(s, "@"); at > 0 {
		if scheme := strings.Index(s, "://"); scheme >= 0 && scheme < at {
			if colon := strings.Index(s[scheme+3:at], ":"); colon >= 0 {
				return s[:scheme+3+colon+1] + "***" + s[at:]
			}
		}
	}
	return s
}
