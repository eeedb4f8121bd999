package audit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

const formatDoc = "../docs/audit-format.md"

// The worked example of docs/audit-format.md.
var (
	exampleEvent1 = audit.Event{
		Seq:     1,
		Time:    time.Date(2025, 6, 1, 9, 30, 0, 123456789, time.UTC),
		Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4"},
		Tenant:  "acme",
		Verb:    "auth.login",
		Subject: audit.Subject{Type: "principal", ID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4"},
		Details: map[string]any{
			"session_ttl_s": 28800,
			"roles":         []string{"approver", "auditor"},
			"method":        "oidc",
			"office":        "Zürich",
		},
		PrevHash: audit.GenesisHash,
	}
	exampleEvent2 = audit.Event{
		Seq:     2,
		Time:    time.Date(2025, 6, 1, 17, 2, 45, 0, time.UTC),
		Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4"},
		Verb:    "auth.logout",
		Subject: audit.Subject{Type: "principal", ID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4"},
	}
)

const (
	exampleHash1 = "e5e7230031a3c123281570820e26f4a522f32d51ab5e3388333d4ea062e13a3e"
	exampleHash2 = "0506784823d9fea709717e5086a447f1974a44096dfe7acfa367837056db4378"
)

func TestHashKnownAnswer(t *testing.T) {
	// Following the document step by step, from the texts it lists.
	row1 := row{
		Seq: 1, Time: "2025-06-01T09:30:00.123456789Z",
		ActorType: "principal", ActorID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4",
		Tenant: "acme", Verb: "auth.login",
		SubjectType: "principal", SubjectID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4",
		Details:  `{"method":"oidc","office":"Zürich","roles":["approver","auditor"],"session_ttl_s":28800}`,
		PrevHash: strings.Repeat("0", 64),
	}
	row2 := row{
		Seq: 2, Time: "2025-06-01T17:02:45.000000000Z",
		ActorType: "principal", ActorID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4",
		Tenant: "", Verb: "auth.logout",
		SubjectType: "principal", SubjectID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4",
		Details: `{}`, PrevHash: exampleHash1,
	}
	if got := docHash(row1); got != exampleHash1 {
		t.Errorf("documented encoding of event 1 = %s, want %s", got, exampleHash1)
	}
	if got := docHash(row2); got != exampleHash2 {
		t.Errorf("documented encoding of event 2 = %s, want %s", got, exampleHash2)
	}

	// The package agrees.
	ev1, ev2 := exampleEvent1, exampleEvent2
	if got, err := audit.Hash(ev1); err != nil || got != exampleHash1 {
		t.Errorf("Hash(event 1) = %s, %v; want %s", got, err, exampleHash1)
	}
	ev1.Hash = exampleHash1
	ev2.PrevHash = exampleHash1
	if got, err := audit.Hash(ev2); err != nil || got != exampleHash2 {
		t.Errorf("Hash(event 2) = %s, %v; want %s", got, err, exampleHash2)
	}
	ev2.Hash = exampleHash2
	if err := audit.VerifyEvents([]audit.Event{ev1, ev2}, &audit.Head{Seq: 2, Hash: exampleHash2}); err != nil {
		t.Errorf("VerifyEvents(worked example) = %v", err)
	}

	// And so does Append, storing exactly the documented texts.
	ctx := context.Background()
	db := openDB(t)
	err := db.Transact(ctx, func(tx *store.Tx) error {
		for _, ev := range []audit.Event{exampleEvent1, exampleEvent2} {
			if _, err := audit.Append(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, db.Read())
	row1.Hash, row2.Hash = exampleHash1, exampleHash2
	if len(rows) != 2 || rows[0] != row1 || rows[1] != row2 {
		t.Errorf("stored rows =\n%+v\nwant\n%+v\n%+v", rows, row1, row2)
	}

	// The document shows these values.
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{exampleHash1, exampleHash2, row1.Time, row1.Details, row2.Time,
		audit.FormatTag, audit.GenesisHash, audit.TimeFormat} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("%s does not contain %q", formatDoc, s)
		}
	}
}

// trickyDetails exercise every rule of canonical JSON (section 3) that an
// independent verifier must reproduce.
func trickyDetails() map[string]any {
	deep := any("bottom")
	for range audit.MaxDetailsDepth - 1 { // the details object is level 1
		deep = []any{deep}
	}
	return map[string]any{
		"floats": []any{1e-6, 1e-7, 1e21, 9.999999999999999e20, 5e-324, math.MaxFloat64, 0.30000000000000004,
			-1e-7, 123456789.123, -0.5, 1.5e-10, 2.5, 1e20, 100.0},
		"ints":       []any{int64(1) << 62, uint64(math.MaxUint64), -1, 0},
		"big":        json.Number("123456789012345678901234567890"),
		"normalised": []any{json.Number("1.0"), json.Number("1E5"), json.Number("-0"), json.Number("2.50"), json.Number("1e-07"), json.Number("-0.0")},
		"s":          "<b>&\"\\\n\t\u2028\u2029 ☕ 𝄞 \x01\x7f/\b\f",
		"keys":       map[string]any{"é": 1, "z": 2, "A": 3, "😀": 4, "\uffff": 5, "": 6},
		"deep":       deep,
		"empty":      []any{map[string]any{}, []any{}, nil, true, false},
	}
}

// TestDocumentedPythonVerifier runs the Python verifier of
// docs/audit-format.md against databases Warden wrote, intact and tampered
// in every way the document lists, and requires Warden's verdict and first
// bad seq from it.
func TestDocumentedPythonVerifier(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("the Python verifier reads a SQLite file")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	if err := exec.Command(python, "-c", "import cryptography").Run(); err != nil {
		t.Skip("the Python verifier needs the cryptography package")
	}
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("%s has no python block", formatDoc)
	}
	script := filepath.Join(t.TempDir(), "verify_audit.py")
	if err := os.WriteFile(script, m[1], 0o600); err != nil {
		t.Fatal(err)
	}

	// setup writes 8 events, the second with tricky details, and
	// checkpoints at seq 3 and 6.
	setup := func(t *testing.T) (*store.DB, *audit.Signer) {
		db := openDB(t)
		s := signerFor(t, db)
		appendEvents(t, db, 1)
		ev := sampleEvent(1)
		ev.Details = trickyDetails()
		err := db.Transact(context.Background(), func(tx *store.Tx) error {
			_, err := audit.Append(context.Background(), tx, ev)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		appendEvents(t, db, 1)
		checkpoint(t, db, s, time.Now())
		appendEvents(t, db, 3)
		checkpoint(t, db, s, time.Now())
		appendEvents(t, db, 2)
		return db, s
	}
	setDetails := func(details string) func(t *testing.T, raw *sql.DB, rows []row) {
		return func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET details = ? WHERE seq = 4`, details)
			rehash(t, raw, 4, rows[2].Hash)
		}
	}
	setTime := func(tm string) func(t *testing.T, raw *sql.DB, rows []row) {
		return func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET time = ? WHERE seq = 4`, tm)
			rehash(t, raw, 4, rows[2].Hash)
		}
	}
	attacker := audit.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize)))
	tests := []struct {
		name    string
		tamper  func(t *testing.T, raw *sql.DB, rows []row)
		wantSeq int64 // 0: intact
	}{
		{"intact", func(*testing.T, *sql.DB, []row) {}, 0},
		{"field edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET actor_id = 'someone' WHERE seq = 4`)
		}, 4},
		{"edited and only that row rehashed: reported at the next seq", func(t *testing.T, raw *sql.DB, rows []row) {
			r := rows[3]
			r.ActorID = "someone"
			mustExec(t, raw, `UPDATE audit_events SET actor_id = ?, hash = ? WHERE seq = 4`, r.ActorID, docHash(r))
		}, 5},
		{"middle row deleted", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq = 4`)
		}, 4},
		{"row inserted with a consistent hash", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET seq = seq + 1 WHERE seq = 8`)
			mustExec(t, raw, `UPDATE audit_events SET seq = seq + 1 WHERE seq = 7`)
			forged := rows[6]
			forged.Verb, forged.Details = "tenant.create", `{"forged":true}`
			forged.Hash = docHash(forged)
			insertRow(t, raw, forged)
		}, 8},
		{"rows swapped", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET seq = 100 WHERE seq = 2`)
			mustExec(t, raw, `UPDATE audit_events SET seq = 2 WHERE seq = 4`)
			mustExec(t, raw, `UPDATE audit_events SET seq = 4 WHERE seq = 100`)
		}, 2},
		{"tail truncated after a checkpoint", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq > 4`)
		}, 5},
		{"tail rewritten and rehashed before a checkpoint", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 5`)
			rehash(t, raw, 5, rows[3].Hash)
		}, 6},
		{"checkpoint signature forged", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_checkpoints SET time = '2031-01-01T00:00:00.000000000Z' WHERE seq = 3`)
		}, 3},
		{"rewrite re-signed with another key", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 2`)
			rehash(t, raw, 2, rows[0].Hash)
			resign(t, raw, attacker, attacker.PublicKeyText())
		}, 3},
		{"signature in non-canonical base64", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_checkpoints SET signature = substr(signature, 1, 85) ||
				char(unicode(substr(signature, 86, 1)) + 1) || '==' WHERE seq = 6`)
		}, 6},
		{"details over 64 KiB", setDetails(`{"x":"` + strings.Repeat("a", 70000) + `"}`), 4},
		// Canonical rewrites pass the row and are caught by the checkpoint.
		{"details of exactly 64 KiB, caught by the checkpoint", setDetails(`{"x":"` + strings.Repeat("a", audit.MaxDetailsBytes-8) + `"}`), 6},
		{"number 1.0", setDetails(`{"n":1.0}`), 4},
		{"number 1E5", setDetails(`{"n":1E5}`), 4},
		{"number -0", setDetails(`{"n":-0}`), 4},
		{"number 1e-07", setDetails(`{"n":1e-07}`), 4},
		{"number beyond float64", setDetails(`{"n":1e400}`), 4},
		{"canonical numbers, caught by the checkpoint", setDetails(`{"n":[1e-7,1e+21,0.000001,123456789012345678901234567890,-5]}`), 6},
		{"nested 33 levels", setDetails(`{"a":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`), 4},
		{"whitespace", setDetails(`{"n": 1}`), 4},
		{"keys unsorted", setDetails(`{"b":1,"a":2}`), 4},
		{"duplicate keys", setDetails(`{"a":1,"a":1}`), 4},
		{"escaped solidus", setDetails(`{"s":"a\/b"}`), 4},
		{"escaped non-ASCII", setDetails(`{"s":"\u00e9"}`), 4},
		{"raw line separator", setDetails("{\"s\":\"\u2028\"}"), 4},
		{"not an object", setDetails(`[1]`), 4},
		{"time with fewer digits", setTime("2025-06-01T09:30:00.123Z"), 4},
		{"time not a date", setTime("2025-02-30T09:30:00.000000000Z"), 4},
		{"time with non-ASCII digits", setTime("２025-06-01T09:30:00.000000000Z"), 4},
		{"time earlier than the event before", setTime("2000-01-01T00:00:00.000000000Z"), 4},
		{"details stored as a BLOB", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET details = CAST(details AS BLOB) WHERE seq = 4`)
		}, 4},
		{"actor id not UTF-8", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET actor_id = CAST(X'ff' AS TEXT) WHERE seq = 4`)
			rehash(t, raw, 4, rows[2].Hash)
		}, 4},
		{"NULL in a rebuilt table", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `CREATE TABLE rebuilt AS SELECT * FROM audit_events`)
			mustExec(t, raw, `DROP TABLE audit_events`)
			mustExec(t, raw, `ALTER TABLE rebuilt RENAME TO audit_events`)
			mustExec(t, raw, `UPDATE audit_events SET tenant = NULL WHERE seq = 3`) // its tenant is empty
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, s := setup(t)
			raw := tamperer(t, db)
			tt.tamper(t, raw, readRows(t, raw))

			_, err := audit.Verify(context.Background(), db.Read(), &audit.Trust{Key: s.PublicKey()})
			var ce *audit.ChainError
			switch {
			case tt.wantSeq == 0 && err != nil:
				t.Fatalf("Verify = %v, want intact", err)
			case tt.wantSeq != 0 && (!errors.As(err, &ce) || ce.Seq != tt.wantSeq):
				t.Fatalf("Verify = %v, want a ChainError at seq %d", err, tt.wantSeq)
			}

			out, code := runPython(t, python, script, db.Path(), "--pubkey", s.PublicKeyText())
			switch {
			case tt.wantSeq == 0 && (code != 0 || !strings.Contains(out, "intact: 8 events")):
				t.Errorf("python verifier = exit %d\n%s\nwant intact", code, out)
			case tt.wantSeq != 0 && (code != 1 || !strings.Contains(out, fmt.Sprintf("broken at seq %d:", tt.wantSeq))):
				t.Errorf("python verifier = exit %d\n%s\nwant exit 1, broken at seq %d (Warden: %v)", code, out, tt.wantSeq, err)
			}
		})
	}

	t.Run("trusted head and missing key", func(t *testing.T) {
		db, s := setup(t)
		rows := readRows(t, db.Read())
		key := s.PublicKeyText()
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"--pubkey", key, "--head", "5", rows[4].Hash}, 0, "intact: 8 events, head 8 " + rows[7].Hash},
			{[]string{"--pubkey", key, "--head", "5", rows[3].Hash}, 1, "broken at seq 5:"},
			{[]string{"--pubkey", key, "--head", "9", rows[7].Hash}, 1, "broken at seq 9:"},
			{[]string{"--pubkey", key, "--head", "5", "abc"}, 2, "could not verify"},
			{nil, 2, "--pubkey"},
			{[]string{"--pubkey", "ed25519:c2hvcnQ="}, 2, "could not verify"},
		} {
			if out, code := runPython(t, python, script, append([]string{db.Path()}, c.args...)...); code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("python verifier %v = exit %d\n%s\nwant exit %d and %q", c.args, code, out, c.code, c.want)
			}
		}
		if out, code := runPython(t, python, script, filepath.Join(t.TempDir(), "missing.db")); code != 2 {
			t.Errorf("python verifier on a missing file = exit %d\n%s\nwant 2", code, out)
		}
	})
}

func runPython(t *testing.T, python, script string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(python, append([]string{script}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("run python: %v", err)
	}
	return out.String(), 0
}
