package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// auditFixture is a data directory whose chain has 8 events and one signed
// checkpoint, of seq 5, as warden serve leaves it. It returns the hashes,
// hashes[seq] for seq 1..8.
func auditFixture(t *testing.T) (dir string, signer *audit.Signer, hashes []string) {
	t.Helper()
	ctx := t.Context()
	dir = t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	signer, err = audit.LoadOrCreateSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	hashes = []string{audit.GenesisHash}
	appendN := func(n int) {
		for range n {
			err := db.Transact(ctx, func(tx *store.Tx) error {
				ev, err := audit.Append(ctx, tx, audit.Event{
					Actor: audit.Actor{Type: audit.ActorSystem, ID: "test"}, Verb: "test.event",
					Details: map[string]any{"n": len(hashes)},
				})
				hashes = append(hashes, ev.Hash)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(5)
	if _, err := audit.Checkpoint(ctx, db, signer, time.Now()); err != nil {
		t.Fatal(err)
	}
	appendN(3)
	return dir, signer, hashes
}

// tamper runs statements on the database file with the append-only
// triggers dropped, as anyone who can write the file can.
func tamper(t *testing.T, dir string, stmts ...string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "warden.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	for _, s := range append([]string{
		`DROP TRIGGER audit_events_no_update`, `DROP TRIGGER audit_events_no_delete`,
		`DROP TRIGGER audit_checkpoints_no_update`, `DROP TRIGGER audit_checkpoints_no_delete`,
	}, stmts...) {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return raw
}

// rehash relinks and rehashes the events from seq from through seq
// through (0: to the end), computing hashes as docs/audit-format.md says:
// the careful tamperer.
func rehash(t *testing.T, raw *sql.DB, from, through int64) {
	t.Helper()
	var prev string
	if err := raw.QueryRow(`SELECT hash FROM audit_events WHERE seq = ?`, from-1).Scan(&prev); err != nil {
		t.Fatal(err)
	}
	if through == 0 {
		through = 1 << 62
	}
	rows, err := raw.Query(`SELECT seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details
		FROM audit_events WHERE seq BETWEEN ? AND ? ORDER BY seq`, from, through)
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]string
	for rows.Next() {
		f := make([]string, 9)
		var s int64
		if err := rows.Scan(&s, &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8]); err != nil {
			t.Fatal(err)
		}
		f[0] = strconv.FormatInt(s, 10)
		recs = append(recs, f)
	}
	rows.Close()
	for _, f := range recs {
		h := sha256.New()
		for _, v := range append([]string{"warden-audit-v1"}, append(f, prev)...) {
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(v))))
			h.Write([]byte(v))
		}
		hash := hex.EncodeToString(h.Sum(nil))
		if _, err := raw.Exec(`UPDATE audit_events SET prev_hash = ?, hash = ? WHERE seq = ?`, prev, hash, f[0]); err != nil {
			t.Fatal(err)
		}
		prev = hash
	}
}

// resignCheckpoints signs every checkpoint again over the current chain
// with key, as an attacker with their own key would.
func resignCheckpoints(t *testing.T, raw *sql.DB, s *audit.Signer) {
	t.Helper()
	rows, err := raw.Query(`SELECT c.seq, e.hash, c.time FROM audit_checkpoints c JOIN audit_events e USING (seq)`)
	if err != nil {
		t.Fatal(err)
	}
	type cp struct {
		seq        int64
		hash, time string
	}
	var cps []cp
	for rows.Next() {
		var c cp
		if err := rows.Scan(&c.seq, &c.hash, &c.time); err != nil {
			t.Fatal(err)
		}
		cps = append(cps, c)
	}
	rows.Close()
	for _, c := range cps {
		msg := fmt.Sprintf("warden-audit-checkpoint/v1\n%d\n%s\n%s", c.seq, c.hash, c.time)
		if _, err := raw.Exec(`UPDATE audit_checkpoints SET hash = ?, signature = ?, key = ? WHERE seq = ?`,
			c.hash, base64.StdEncoding.EncodeToString(s.Sign([]byte(msg))), s.PublicKeyText(), c.seq); err != nil {
			t.Fatal(err)
		}
	}
}

func runAudit(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), append([]string{"audit"}, args...), envMap(env), &out, &errb)
	return code, out.String(), errb.String()
}

// TestAuditVerifyDetectsTampering: each way of tampering with the database
// file is found by warden audit verify, which exits 1 naming the first bad
// seq.
func TestAuditVerifyDetectsTampering(t *testing.T) {
	attacker := audit.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize)))
	tests := []struct {
		name    string
		tamper  func(t *testing.T, dir string)
		wantSeq int64
	}{
		{"a field edited", func(t *testing.T, dir string) {
			tamper(t, dir, `UPDATE audit_events SET details = '{"n":99}' WHERE seq = 3`)
		}, 3},
		{"a row deleted", func(t *testing.T, dir string) {
			tamper(t, dir, `DELETE FROM audit_events WHERE seq = 3`)
		}, 3},
		{"a row inserted with a consistent hash, later rows renumbered", func(t *testing.T, dir string) {
			raw := tamper(t, dir, `UPDATE audit_events SET seq = 9 WHERE seq = 8`, `UPDATE audit_events SET seq = 8 WHERE seq = 7`,
				`INSERT INTO audit_events SELECT 7, time, actor_type, actor_id, tenant, 'tenant.create', subject_type, subject_id,
					'{"forged":true}', prev_hash, '' FROM audit_events WHERE seq = 8`)
			rehash(t, raw, 7, 7) // the forgery fits its place; the row it displaced does not
		}, 8},
		{"two rows reordered", func(t *testing.T, dir string) {
			tamper(t, dir, `UPDATE audit_events SET seq = 100 WHERE seq = 2`, `UPDATE audit_events SET seq = 2 WHERE seq = 4`,
				`UPDATE audit_events SET seq = 4 WHERE seq = 100`)
		}, 2},
		{"the tail truncated after a checkpoint", func(t *testing.T, dir string) {
			tamper(t, dir, `DELETE FROM audit_events WHERE seq > 3`)
		}, 4},
		{"the tail rewritten and rehashed after a checkpoint", func(t *testing.T, dir string) {
			raw := tamper(t, dir, `UPDATE audit_events SET details = '{"n":40}' WHERE seq = 4`)
			rehash(t, raw, 4, 0)
		}, 5},
		{"a checkpoint signature forged", func(t *testing.T, dir string) {
			tamper(t, dir, `UPDATE audit_checkpoints SET signature = '`+base64.StdEncoding.EncodeToString(make([]byte, 64))+`'`)
		}, 5},
		{"the rewrite re-signed with another key", func(t *testing.T, dir string) {
			raw := tamper(t, dir, `UPDATE audit_events SET details = '{"n":40}' WHERE seq = 4`)
			rehash(t, raw, 4, 0)
			resignCheckpoints(t, raw, attacker)
		}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _, _ := auditFixture(t)
			env := map[string]string{"WARDEN_DATA_DIR": dir}
			if code, out, errb := runAudit(t, env, "verify"); code != 0 {
				t.Fatalf("verify before tampering = %d\n%s%s", code, out, errb)
			}
			tt.tamper(t, dir)
			code, out, errb := runAudit(t, env, "verify")
			if want := fmt.Sprintf("audit chain BROKEN at seq %d:", tt.wantSeq); code != 1 || !strings.Contains(errb, want) || out != "" {
				t.Errorf("verify after tampering = exit %d\nstdout %q\nstderr %q\nwant exit 1 and %q", code, out, errb, want)
			}
		})
	}
}

func TestAuditVerifyIntactAndTrustedHeads(t *testing.T) {
	dir, signer, hashes := auditFixture(t)
	env := map[string]string{"WARDEN_DATA_DIR": dir}
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout for 0, stderr otherwise
	}{
		{"intact", nil, 0, fmt.Sprintf("audit chain intact: 8 events, head 8 %s\nagrees with 1 signed checkpoint(s); the newest, of seq 5,", hashes[8])},
		{"by flag", []string{"--data-dir", dir}, 0, "intact: 8 events"},
		{"by flag with =", []string{"--data-dir=" + dir}, 0, "intact: 8 events"},
		{"trusted head", []string{"--head", "6", hashes[6]}, 0, "agrees with the trusted head 6 " + hashes[6]},
		{"trusted head in capitals", []string{"--head", "6", strings.ToUpper(hashes[6])}, 0, "intact: 8 events"},
		{"trusted head of the empty chain", []string{"--head", "0", audit.GenesisHash}, 0, "intact: 8 events"},
		{"trusted head with a wrong hash", []string{"--head", "6", hashes[7]}, 1, "BROKEN at seq 6: hash differs from the trusted head"},
		{"trusted head beyond the end", []string{"--head", "9", hashes[8]}, 1, "BROKEN at seq 9: chain ends at seq 8 but the trusted head is at seq 9"},
		{"trusted head malformed", []string{"--head", "6", "abc"}, 2, "invalid trusted head"},
		{"trusted head without a hash", []string{"--head", "6"}, 2, "--head needs 2 value(s)"},
		{"trusted head seq not a number", []string{"--head", "six", hashes[6]}, 2, "not a whole number"},
		{"the installation's key given", []string{"--pubkey", signer.PublicKeyText()}, 0, "intact: 8 events"},
		{"another key given", []string{"--pubkey", audit.FormatPublicKey(make(ed25519.PublicKey, ed25519.PublicKeySize))}, 1,
			"BROKEN at seq 5: checkpoint of seq 5: signed by"},
		{"a malformed key", []string{"--pubkey", "ed25519:short"}, 2, "--pubkey"},
		{"an unknown flag", []string{"--fast"}, 2, `unexpected argument "--fast"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errb := runAudit(t, env, append([]string{"verify"}, tt.args...)...)
			got := errb
			if tt.code == 0 {
				got = out
			}
			if code != tt.code || !strings.Contains(got, tt.want) {
				t.Errorf("verify %v = exit %d\nstdout %q\nstderr %q\nwant exit %d and %q", tt.args, code, out, errb, tt.code, tt.want)
			}
		})
	}
}

// TestAuditVerifyReadsACopyReadOnly: an auditor's copy in a read-only
// directory verifies, and verification changes nothing.
func TestAuditVerifyReadsACopyReadOnly(t *testing.T) {
	dir, signer, hashes := auditFixture(t)
	for _, withKey := range []bool{true, false} {
		t.Run(fmt.Sprintf("key copied %v", withKey), func(t *testing.T) {
			copyDir := t.TempDir()
			files := []string{"warden.db"}
			if withKey {
				files = append(files, "audit-signing.key")
			}
			for _, name := range files {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(copyDir, name), b, 0o400); err != nil {
					t.Fatal(err)
				}
			}
			before, err := os.ReadFile(filepath.Join(copyDir, "warden.db"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(copyDir, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(copyDir, 0o700) })
			env := map[string]string{"WARDEN_DATA_DIR": copyDir}

			code, out, errb := runAudit(t, env, "verify")
			switch {
			case withKey && (code != 0 || !strings.Contains(out, "intact: 8 events, head 8 "+hashes[8])):
				t.Errorf("verify of a read-only copy = exit %d\n%s%s\nwant 0, intact", code, out, errb)
			case !withKey && (code != 2 || !strings.Contains(errb, "pass --pubkey")):
				t.Errorf("verify of a copy without the key = exit %d\n%s%s\nwant 2 asking for --pubkey", code, out, errb)
			}
			if !withKey {
				code, out, errb = runAudit(t, env, "verify", "--pubkey", signer.PublicKeyText())
				if code != 0 || !strings.Contains(out, "intact: 8 events") {
					t.Errorf("verify of a copy with --pubkey = exit %d\n%s%s\nwant 0", code, out, errb)
				}
			}
			after, err := os.ReadFile(filepath.Join(copyDir, "warden.db"))
			if err != nil || !bytes.Equal(before, after) {
				t.Errorf("verify changed the database file (%v)", err)
			}
			if st, err := os.Stat(filepath.Join(copyDir, "warden.db")); err != nil || st.Mode().Perm() != 0o400 {
				t.Errorf("database mode after verify = %v, %v; want 0400 untouched", st.Mode().Perm(), err)
			}
		})
	}
}

func TestAuditVerifyCouldNotRead(t *testing.T) {
	garbage := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbage, "warden.db"), bytes.Repeat([]byte("not a database "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no database", map[string]string{"WARDEN_DATA_DIR": t.TempDir()}, []string{"verify"}, "no database at"},
		{"no data directory", map[string]string{"WARDEN_DATA_DIR": filepath.Join(t.TempDir(), "missing")}, []string{"verify"}, "no database at"},
		{"not a database", map[string]string{"WARDEN_DATA_DIR": garbage}, []string{"verify"}, "could not verify"},
		{"no subcommand", nil, nil, "Usage:"},
		{"unknown subcommand", nil, []string{"rewrite"}, `unknown command "rewrite"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errb := runAudit(t, tt.env, tt.args...)
			if code != 2 || !strings.Contains(errb, tt.want) {
				t.Errorf("audit %v = exit %d\nstdout %q\nstderr %q\nwant exit 2 and %q", tt.args, code, out, errb, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "warden.db")); !os.IsNotExist(err) {
		t.Error("verify created a database")
	}
}

// TestAuditVerifyAppliesNoMigration: a database from before checkpoints
// verifies as it is and stays as it was.
func TestAuditVerifyAppliesNoMigration(t *testing.T) {
	dir, _, _ := auditFixture(t)
	raw := tamper(t, dir, `DROP TABLE audit_checkpoints`, `DELETE FROM schema_migrations WHERE version = 8`)
	code, out, errb := runAudit(t, map[string]string{"WARDEN_DATA_DIR": dir}, "verify")
	if code != 0 || !strings.Contains(out, "intact: 8 events") || !strings.Contains(out, "no signed checkpoints yet") {
		t.Errorf("verify of a database from before checkpoints = exit %d\n%s%s", code, out, errb)
	}
	if ok, err := store.TableExists(t.Context(), raw, "audit_checkpoints"); err != nil || ok {
		t.Errorf("audit_checkpoints exists after verify: %v, %v; want not: verify migrated the database", ok, err)
	}
}

func TestAuditPubkey(t *testing.T) {
	dir, signer, _ := auditFixture(t)
	code, out, errb := runAudit(t, map[string]string{"WARDEN_DATA_DIR": dir}, "pubkey")
	if code != 0 || out != signer.PublicKeyText()+"\n" {
		t.Errorf("audit pubkey = exit %d %q %q, want 0 and %q", code, out, errb, signer.PublicKeyText())
	}
	if key, err := audit.ParsePublicKey(strings.TrimSpace(out)); err != nil || !key.Equal(signer.PublicKey()) {
		t.Errorf("printed key parses to %v, %v", key, err)
	}
	if code, out, _ := runAudit(t, nil, "pubkey", "--data-dir", dir); code != 0 || out != signer.PublicKeyText()+"\n" {
		t.Errorf("audit pubkey --data-dir = exit %d %q", code, out)
	}

	empty := t.TempDir()
	code, _, errb = runAudit(t, map[string]string{"WARDEN_DATA_DIR": empty}, "pubkey")
	if code != 2 || !strings.Contains(errb, "no audit signing key") {
		t.Errorf("audit pubkey without a key = exit %d %q, want 2", code, errb)
	}
	if _, err := os.Stat(filepath.Join(empty, "audit-signing.key")); !os.IsNotExist(err) {
		t.Errorf("audit pubkey created a key: %v", err)
	}
}

func TestAuditHelp(t *testing.T) {
	var out bytes.Buffer
	if code := run(t.Context(), []string{"audit", "help"}, envMap(nil), &out, io.Discard); code != 0 ||
		!strings.Contains(out.String(), "warden audit verify [--data-dir DIR] [--pubkey KEY] [--head SEQ HASH]") ||
		!strings.Contains(out.String(), "warden audit pubkey") {
		t.Errorf("audit help = %d\n%s", code, out.String())
	}
	out.Reset()
	if code := run(t.Context(), []string{"help"}, envMap(nil), &out, io.Discard); code != 0 ||
		!strings.Contains(out.String(), "warden audit pubkey") || !strings.Contains(out.String(), "--audit-checkpoint-interval") {
		t.Errorf("warden help = %d\n%s", code, out.String())
	}
}

// TestServeSignsCheckpointsAndTheConsoleChecksThem: warden serve takes a
// checkpoint at start-up, periodically, and at shutdown, so that its whole
// chain ends signed; the console's "Verify chain" holds the chain to the
// checkpoints and records the head it verified.
func TestServeSignsCheckpointsAndTheConsoleChecksThem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := startProcess(t, dir, "WARDEN_AUDIT_CHECKPOINT_INTERVAL=1s")
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, "a checkpoint at start-up", func() bool {
		_, err := audit.LatestCheckpoint(ctx, db.Read())
		return err == nil
	})
	if msg := pressVerify(t, signInHTTP(t, p.URL, "dave")); !strings.HasPrefix(msg, "Chain intact:") {
		t.Errorf("console verification = %q, want intact", msg)
	}
	p.stop(t)

	key := mustPublicKey(t, dir)
	head, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: key})
	if err != nil {
		t.Fatalf("Verify after serve = %v", err)
	}
	latest, err := audit.LatestCheckpoint(ctx, db.Read())
	if err != nil || latest.Head != head {
		t.Errorf("newest checkpoint after shutdown = %v, %v; want the head %v", latest.Head, err, head)
	}
	code, out, errb := runAudit(t, map[string]string{"WARDEN_DATA_DIR": dir}, "verify")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("the newest, of seq %d,", head.Seq)) {
		t.Errorf("audit verify after serve = exit %d\n%s%s", code, out, errb)
	}
	var details string
	if err := db.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'audit.verify_ok'`).Scan(&details); err != nil ||
		!strings.Contains(details, `"verified_through_hash":"`) {
		t.Errorf("audit.verify_ok details = %s, %v; want the verified head's hash", details, err)
	}

	// Cut the two newest events, which the shutdown checkpoint covers: the
	// next start refuses to sign over the cut, and the console reports it.
	tamper(t, dir, fmt.Sprintf(`DELETE FROM audit_events WHERE seq > %d`, head.Seq-2))
	p = startProcess(t, dir, "WARDEN_AUDIT_CHECKPOINT_INTERVAL=1s")
	waitFor(t, "the refused checkpoint to be logged", func() bool {
		return strings.Contains(p.logs.String(), "audit chain broken: no checkpoint signed")
	})
	if msg := pressVerify(t, signInHTTP(t, p.URL, "dave")); !strings.HasPrefix(msg, "Chain broken at seq") {
		t.Errorf("console verification of a cut chain = %q, want broken", msg)
	}
	p.stop(t)
	if err := db.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'audit.verify_failed'`).Scan(&details); err != nil ||
		!strings.Contains(details, `"first_bad_seq":`) || !strings.Contains(details, `"verified_through_hash":"`) {
		t.Errorf("audit.verify_failed details = %s, %v; want the first bad seq and the intact head", details, err)
	}
}

// pressVerify presses the audit page's "Verify chain" button and returns
// the result shown.
func pressVerify(t *testing.T, c *console) string {
	t.Helper()
	doc, _ := c.get("/audit")
	form := doc.Find(`[data-testid="verify-chain"]`).Closest("form")
	csrf, _ := form.Find(`input[name="_csrf"]`).Attr("value")
	action, _ := form.Attr("action")
	if csrf == "" || action == "" {
		t.Fatal("no verify form on the audit page")
	}
	resp, err := c.c.PostForm(c.base+action, url.Values{"_csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(page.Find(`[data-testid="verify-result"]`).Text())
}

func mustPublicKey(t *testing.T, dir string) ed25519.PublicKey {
	t.Helper()
	key, err := audit.LoadPublicKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
