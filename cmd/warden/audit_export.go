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
	"github.com/wardenhq/warden/handlers"
)

const (
	auditExportUsage       = "usage: warden audit export --format jsonl|csv --out PATH [--tenant T] [--actor A] [--verb V] [--subject-type T] [--subject-id I] [--since TIME] [--until TIME] [--data-dir DIR]"
	auditVerifyExportUsage = "usage: warden audit verify-export EXPORT MANIFEST [--pubkey ed25519:KEY]"
)

// auditExportCmd runs "warden audit export" and "warden audit
// verify-export"; args starts with the subcommand's name.
func auditExportCmd(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if args[0] == "verify-export" {
		return auditVerifyExport(args[1:], stdout, stderr)
	}
	return auditExport(ctx, args[1:], env, stdout, stderr)
}

// auditExport writes the events the filters select to --out and their
// signed manifest to --out.manifest.json, and records the export in the
// trail. Each file appears whole or not at all.
func auditExport(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("warden audit export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, auditExportUsage); fs.PrintDefaults() }
	dir := "./warden-data"
	if v, ok := env("WARDEN_DATA_DIR"); ok && v != "" {
		dir = v
	}
	fs.StringVar(&dir, "data-dir", dir, "data directory (WARDEN_DATA_DIR)")
	format := fs.String("format", "", "jsonl or csv")
	out := fs.String("out", "", "file to write; the manifest goes to PATH.manifest.json")
	var q audit.Query
	fs.StringVar(&q.Tenant, "tenant", "", "only this tenant's events (slug)")
	fs.StringVar(&q.ActorID, "actor", "", "only this actor's events (principal id, key id, ...)")
	fs.StringVar(&q.Verb, "verb", "", `only this verb, or verbs starting with it when it ends in "." ("action.")`)
	fs.StringVar(&q.SubjectType, "subject-type", "", "only events about this kind of subject (action, tenant, key, ...)")
	fs.StringVar(&q.SubjectID, "subject-id", "", "only events about this subject")
	since := fs.String("since", "", "only events at or after this time (RFC 3339, or a UTC date)")
	until := fs.String("until", "", "only events before this time (RFC 3339, or a UTC date)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "warden audit export: unexpected argument %q\n%s\n", fs.Arg(0), auditExportUsage)
		return 2
	}
	if *format != audit.FormatJSONL && *format != audit.FormatCSV {
		fmt.Fprintf(stderr, "warden audit export: --format: want jsonl or csv\n%s\n", auditExportUsage)
		return 2
	}
	if *out == "" {
		fmt.Fprintf(stderr, "warden audit export: --out: name the file to write\n%s\n", auditExportUsage)
		return 2
	}
	for _, b := range []struct {
		name, text string
		t          *time.Time
	}{{"since", *since, &q.Since}, {"until", *until, &q.Until}} {
		if b.text == "" {
			continue
		}
		t, err := audit.ParseTime(b.text)
		if err != nil {
			fmt.Fprintf(stderr, "warden audit export: --%s: %v\n", b.name, err)
			return 2
		}
		*b.t = t
	}
	if err := audit.CheckQuery(q); err != nil {
		fmt.Fprintf(stderr, "warden audit export: %v\n", err)
		return 2
	}

	db, err := openCommandStore(ctx, dir, env, false)
	if errors.Is(err, errNoDatabase) {
		fmt.Fprintf(stderr, "warden audit export: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden audit export: %v\n", err)
		return 1
	}
	defer db.Close()
	signer, err := audit.LoadOrCreateSigner(dir)
	if err != nil {
		fmt.Fprintf(stderr, "warden audit export: %v\n", err)
		return 1
	}

	var m audit.Manifest
	err = writeAtomically(*out, func(w io.Writer) error {
		var err error
		if _, err = audit.Checkpoint(ctx, db, signer, time.Now()); err != nil {
			return err
		}
		m, err = audit.Export(ctx, db.Read(), q, *format, handlers.AuditSentences(db), w, signer, time.Now())
		return err
	})
	if err == nil {
		err = writeAtomically(*out+".manifest.json", func(w io.Writer) error { return audit.WriteManifest(w, m) })
	}
	if err == nil {
		err = audit.RecordExport(ctx, db, audit.Actor{Type: audit.ActorSystem, ID: "cli"}, m)
	}
	if err != nil {
		fmt.Fprintf(stderr, "warden audit export: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "exported %d events%s to %s\nmanifest: %s.manifest.json\nSHA-256:  %s\n",
		m.Rows, seqRange(m), *out, *out, m.SHA256)
	if !m.Contiguous {
		fmt.Fprintf(stdout, "filtered (%s): each row verifies on its own; the events between them are not in the export\n", filterText(m.Filters))
	}
	return 0
}

// writeAtomically writes path through a temporary file in the same
// directory, renamed into place only when write succeeded.
func writeAtomically(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// auditVerifyExport checks an export against its manifest without the
// database. Exit 0: verified; 1: not (the first bad row or reason on
// stderr); 2: the files or the key could not be read.
func auditVerifyExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("warden audit verify-export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, auditVerifyExportUsage); fs.PrintDefaults() }
	pubText := fs.String("pubkey", "", "the installation's public key (warden audit pubkey); without it, the manifest's own key is used")
	// Flags may come before, between or after the two paths.
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		paths, args = append(paths, fs.Arg(0)), fs.Args()[1:]
	}
	if len(paths) != 2 {
		fmt.Fprintln(stderr, auditVerifyExportUsage)
		return 2
	}
	var pub ed25519.PublicKey
	if *pubText != "" {
		k, err := audit.ParsePublicKey(*pubText)
		if err != nil {
			fmt.Fprintf(stderr, "warden audit verify-export: --pubkey: %v\n", err)
			return 2
		}
		pub = k
	}
	mf, err := os.Open(paths[1])
	if err != nil {
		fmt.Fprintf(stderr, "warden audit verify-export: cannot read the manifest: %v\n", err)
		return 2
	}
	m, err := audit.ReadManifest(mf)
	mf.Close()
	if err != nil {
		fmt.Fprintf(stderr, "warden audit verify-export: cannot read the manifest %s: %v\n", paths[1], err)
		return 2
	}
	f, err := os.Open(paths[0])
	if err != nil {
		fmt.Fprintf(stderr, "warden audit verify-export: cannot read the export: %v\n", err)
		return 2
	}
	defer f.Close()
	rep, err := audit.VerifyExport(f, m, pub)
	if err != nil {
		fmt.Fprintf(stderr, "warden audit verify-export: cannot read the export %s: %v\n", paths[0], err)
		return 2
	}
	key := keyText(rep)
	if !rep.OK() {
		where := ""
		switch {
		case rep.Row > 0 && rep.Seq > 0:
			where = fmt.Sprintf("row %d (seq %d): ", rep.Row, rep.Seq)
		case rep.Row > 0:
			where = fmt.Sprintf("row %d: ", rep.Row)
		}
		fmt.Fprintf(stderr, "export NOT verified: %s%s\nsignature key: %s\n", where, rep.Problem, key)
		return 1
	}
	fmt.Fprintf(stdout, "export verified: %s\n", paths[0])
	fmt.Fprintf(stdout, "  rows:       %d%s, %s\n", rep.Rows, seqRange(m), m.Format)
	fmt.Fprintf(stdout, "  file:       SHA-256 %s, as in the manifest\n", m.SHA256)
	fmt.Fprintf(stdout, "  signature:  valid, by %s\n", key)
	fmt.Fprintf(stdout, "  created:    %s\n", m.CreatedAt)
	switch {
	case rep.Continuity && m.Rows > 0:
		fmt.Fprintf(stdout, "  continuity: verified: the rows are an unbroken stretch of the chain, from hash %s before seq %d to hash %s at seq %d\n",
			m.StartHash, m.FirstSeq, m.EndHash, m.LastSeq)
	case rep.Continuity:
		fmt.Fprintln(stdout, "  continuity: the range holds no events")
	default:
		fmt.Fprintf(stdout, "  continuity: NOT claimed: the export is filtered (%s); each row was verified on its own, and events left out between rows cannot be detected from this file\n",
			filterText(m.Filters))
	}
	return 0
}

// keyText says which key a report's signature was checked with.
func keyText(rep audit.ExportReport) string {
	if rep.KeyFromManifest {
		return rep.Key + " (the key in the manifest itself: this shows the manifest is unchanged since it was signed, not who signed it; compare the key with `warden audit pubkey` on the installation, or pass --pubkey)"
	}
	return rep.Key + " (given with --pubkey)"
}

func seqRange(m audit.Manifest) string {
	if m.Rows == 0 {
		return ""
	}
	return fmt.Sprintf(" (seq %d to %d)", m.FirstSeq, m.LastSeq)
}

// filterText lists the filters that are set, as name="value" (quoted: a
// manifest is not trusted text until its key is).
func filterText(f audit.ExportFilters) string {
	var parts []string
	for _, p := range [][2]string{
		{"tenant", f.Tenant}, {"actor", f.Actor}, {"verb", f.Verb}, {"subject_type", f.SubjectType},
		{"subject_id", f.SubjectID}, {"since", f.Since}, {"until", f.Until},
	} {
		if p[1] != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", p[0], p[1]))
		}
	}
	if len(parts) == 0 {
		return "no filters"
	}
	return strings.Join(parts, ", ")
}
