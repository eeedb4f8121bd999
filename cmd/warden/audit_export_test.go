package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// auditExportDir makes a data directory whose trail has 9 events in
// tenants acme and globex.
func auditExportDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	verbs := []string{"action.approve", "action.reject", "auth.login"}
	for i := range 9 {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := audit.Append(ctx, tx, audit.Event{
				Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-" + string(rune('a'+i))}, Verb: verbs[i%3],
				Tenant: []string{"acme", "globex"}[i%2], Subject: audit.Subject{Type: "action", ID: "=a" + string(rune('0'+i))},
				Details: map[string]any{"n": i, "note": "comma, \"quote\""},
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cli runs warden with args and the data directory, returning the exit
// code, stdout and stderr.
func cli(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, envMap(map[string]string{"WARDEN_DATA_DIR": dir}), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAuditExportCommand(t *testing.T) {
	dir := auditExportDir(t)
	out := filepath.Join(t.TempDir(), "trail.jsonl")
	code, stdout, stderr := cli(t, dir, "audit", "export", "--format", "jsonl", "--out", out)
	if code != 0 || !strings.Contains(stdout, "exported 9 events (seq 1 to 9)") {
		t.Fatalf("audit export = %d\n%s%s", code, stdout, stderr)
	}
	m := readManifestFile(t, out+".manifest.json")
	signer, err := audit.LoadOrCreateSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 9 || !m.Contiguous || m.Format != "jsonl" || m.PublicKey != signer.PublicKeyText() {
		t.Errorf("manifest = %+v, want 9 contiguous JSONL rows signed by the installation's key", m)
	}

	// The export is in the trail, after the rows it exported.
	db, err := store.Open(context.Background(), filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: 1})
	db.Close()
	if err != nil || len(evs) != 1 {
		t.Fatal(err)
	}
	ev := evs[0]
	if ev.Seq != 10 || ev.Verb != "audit.export" || ev.Actor != (audit.Actor{Type: audit.ActorSystem, ID: "cli"}) ||
		ev.Subject != (audit.Subject{Type: "audit_export", ID: m.SHA256}) ||
		ev.Details["rows"] != json.Number("9") || ev.Details["sha256"] != m.SHA256 || ev.Details["format"] != "jsonl" {
		t.Errorf("newest event = %+v, want the export recorded as audit.export by the cli", ev)
	}

	code, stdout, stderr = cli(t, "", "audit", "verify-export", out, out+".manifest.json")
	if code != 0 || !strings.Contains(stdout, "export verified") || !strings.Contains(stdout, "continuity: verified") ||
		!strings.Contains(stdout, signer.PublicKeyText()+" (the key in the manifest itself") {
		t.Errorf("verify-export = %d\n%s%s\nwant verified, continuity verified, saying the manifest's key was used", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, "", "audit", "verify-export", "--pubkey", signer.PublicKeyText(), out, out+".manifest.json")
	if code != 0 || !strings.Contains(stdout, signer.PublicKeyText()+" (given with --pubkey)") {
		t.Errorf("verify-export --pubkey = %d\n%s%s\nwant verified with the given key", code, stdout, stderr)
	}

	// Filtered, as CSV, with the key after the paths.
	csvOut := filepath.Join(t.TempDir(), "acme.csv")
	code, stdout, stderr = cli(t, dir, "audit", "export", "--format", "csv", "--out", csvOut, "--tenant", "acme", "--verb", "action.", "--since", "2000-01-01")
	if code != 0 || !strings.Contains(stdout, "exported 3 events") || !strings.Contains(stdout, `filtered (tenant="acme", verb="action.", since="2000-01-01T00:00:00.000000000Z")`) {
		t.Fatalf("audit export --tenant acme = %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, "", "audit", "verify-export", csvOut, csvOut+".manifest.json", "--pubkey", signer.PublicKeyText())
	if code != 0 || !strings.Contains(stdout, "continuity: NOT claimed: the export is filtered (tenant=\"acme\"") {
		t.Errorf("verify-export of a filtered export = %d\n%s%s\nwant verified, continuity not claimed", code, stdout, stderr)
	}
	data, err := os.ReadFile(csvOut)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(",'=a")) {
		t.Errorf("the formula-like subject ids are not guarded in the CSV:\n%s", data)
	}
}

func TestAuditVerifyExportCommandDetectsTampering(t *testing.T) {
	dir := auditExportDir(t)
	out := filepath.Join(t.TempDir(), "trail.jsonl")
	if code, stdout, stderr := cli(t, dir, "audit", "export", "--format", "jsonl", "--out", out); code != 0 {
		t.Fatalf("audit export = %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(out + ".manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := audit.LoadOrCreateSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	forger := audit.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize)))
	forged := func(ownKey bool) []byte {
		m, err := audit.ReadManifest(bytes.NewReader(manifest))
		if err != nil {
			t.Fatal(err)
		}
		if ownKey {
			m.PublicKey = forger.PublicKeyText()
		}
		m.Signature = base64.StdEncoding.EncodeToString(forger.Sign(m.SignedBytes()))
		var b bytes.Buffer
		audit.WriteManifest(&b, m)
		return b.Bytes()
	}
	rows := bytes.SplitAfter(data, []byte("\n"))

	tests := []struct {
		name           string
		data, manifest []byte
		args           []string
		code           int
		want           string
	}{
		{"a byte of row 2 changed", bytes.Replace(data, []byte(`"p-b"`), []byte(`"p-c"`), 1), manifest, nil,
			1, "export NOT verified: row 2 (seq 2): hash does not match the row's fields"},
		{"row 4 dropped", bytes.Join(append(rows[:3:3], rows[4:]...), nil), manifest, nil,
			1, "row 4 (seq 5): seq 5 follows seq 3"},
		{"rows 2 and 3 swapped", bytes.Join(append(append(rows[:1:1], rows[2], rows[1]), rows[3:]...), nil), manifest, nil,
			1, "row 2 (seq 3)"},
		{"the manifest's row count edited", data, bytes.Replace(manifest, []byte(`"rows": 9`), []byte(`"rows": 8`), 1), nil,
			1, "signature does not verify"},
		{"re-signed by another key", data, forged(false), nil,
			1, "signature does not verify with the public key in the manifest"},
		{"re-signed by another key with its public key, checked against the installation's", data, forged(true),
			[]string{"--pubkey", signer.PublicKeyText()}, 1, "signature does not verify with the given public key"},
		{"a manifest that is not JSON", data, manifest[:20], nil, 2, "cannot read the manifest"},
		{"a malformed --pubkey", data, manifest, []string{"--pubkey", "ed25519:nope"}, 2, "--pubkey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			exp, man := filepath.Join(tmp, "x.jsonl"), filepath.Join(tmp, "x.jsonl.manifest.json")
			os.WriteFile(exp, tt.data, 0o600)
			os.WriteFile(man, tt.manifest, 0o600)
			code, stdout, stderr := cli(t, "", append([]string{"audit", "verify-export", exp, man}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("verify-export = %d\nstdout: %s\nstderr: %s\nwant exit %d saying %q", code, stdout, stderr, tt.code, tt.want)
			}
		})
	}

	// A forger's own key verifies its own manifest, and the output says
	// the key came from the manifest.
	tmp := t.TempDir()
	man := filepath.Join(tmp, "forged.manifest.json")
	os.WriteFile(man, forged(true), 0o600)
	code, stdout, _ := cli(t, "", "audit", "verify-export", out, man)
	if code != 0 || !strings.Contains(stdout, forger.PublicKeyText()+" (the key in the manifest itself") {
		t.Errorf("verify-export of a forger's manifest without --pubkey = %d\n%s\nwant it to name the forger's key as the manifest's own", code, stdout)
	}
}

func TestAuditExportCommandRefusesBadInput(t *testing.T) {
	dir := auditExportDir(t)
	tmp := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no format", []string{"export", "--out", filepath.Join(tmp, "a")}, 2, "--format"},
		{"unknown format", []string{"export", "--format", "xlsx", "--out", filepath.Join(tmp, "a")}, 2, "--format"},
		{"no out", []string{"export", "--format", "csv"}, 2, "--out"},
		{"bad since", []string{"export", "--format", "csv", "--out", filepath.Join(tmp, "a"), "--since", "yesterday"}, 2, "--since"},
		{"control character in a filter", []string{"export", "--format", "csv", "--out", filepath.Join(tmp, "a"), "--tenant", "a\x1bb"}, 2, "control character"},
		{"no such directory", []string{"export", "--format", "csv", "--out", filepath.Join(tmp, "missing", "a")}, 1, "missing"},
		{"one path", []string{"verify-export", filepath.Join(tmp, "a")}, 2, "usage"},
		{"no such export", []string{"verify-export", filepath.Join(tmp, "a"), filepath.Join(tmp, "b")}, 2, "cannot read"},
	}
	for _, tt := range tests {
		code, _, stderr := cli(t, dir, append([]string{"audit"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: warden audit %s = %d, %q; want %d mentioning %q", tt.name, strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("refused exports left files: %v", entries)
	}
	code, _, stderr := cli(t, t.TempDir(), "audit", "export", "--format", "csv", "--out", filepath.Join(tmp, "a"))
	if code != 2 || !strings.Contains(stderr, "no database") {
		t.Errorf("export without a database = %d, %q; want 2, no database", code, stderr)
	}
}

func readManifestFile(t *testing.T, path string) audit.Manifest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := audit.ReadManifest(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
