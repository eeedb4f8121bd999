package audit_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
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
	err := db.Transact(ctx, func(tx *sql.Tx) error {
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

// TestDocumentedPythonVerifier runs the Python verifier of
// docs/audit-format.md against rows Warden wrote, exported as the document
// says.
func TestDocumentedPythonVerifier(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
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

	ctx := context.Background()
	db := openDB(t)
	events := appendEvents(t, db, 4)
	err = db.Transact(ctx, func(tx *sql.Tx) error {
		ev := exampleEvent1
		ev.Details = map[string]any{"s": "<b>&\"\\\n\t\u2028 ☕ 𝄞 \x01", "n": []any{1e-7, 1e21, -0.5, int64(1) << 62}}
		last, err := audit.Append(ctx, tx, ev)
		events = append(events, last)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	head := events[len(events)-1]

	run := func(args ...string) (string, error) {
		cmd := exec.Command(python, append([]string{script}, args...)...)
		cmd.Stdin = bytes.NewReader(exportRows(t, db.Path(), db.Read()))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := run()
	if err != nil || !strings.Contains(out, "intact: 5 events, head 5 "+head.Hash) {
		t.Fatalf("python verifier on an intact chain: %v\n%s", err, out)
	}
	out, err = run("5", head.Hash)
	if err != nil {
		t.Errorf("python verifier with the right head: %v\n%s", err, out)
	}

	raw := tamperer(t, db)
	mustExec(t, raw, `DELETE FROM audit_events WHERE seq = 5`)
	out, err = run("5", head.Hash)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(out, "trusted head at seq 5") {
		t.Errorf("python verifier on a truncated chain: %v\n%s, want a failure naming the head", err, out)
	}
	mustExec(t, raw, `UPDATE audit_events SET details = replace(details, 'oidc', 'saml') WHERE seq = 2`)
	out, err = run()
	if !errors.As(err, &exit) || !strings.Contains(out, "broken at seq 2") {
		t.Errorf("python verifier on an edited chain: %v\n%s, want a failure at seq 2", err, out)
	}
}

// exportRows is `sqlite3 -json DB 'SELECT * FROM audit_events ORDER BY
// seq'`, or the same JSON made here when the sqlite3 shell is missing.
func exportRows(t *testing.T, path string, q *sql.DB) []byte {
	t.Helper()
	if shell, err := exec.LookPath("sqlite3"); err == nil {
		out, err := exec.Command(shell, "-json", path, `SELECT * FROM audit_events ORDER BY seq`).Output()
		if err != nil {
			t.Fatalf("sqlite3 -json: %v", err)
		}
		return out
	}
	b, err := json.Marshal(readRows(t, q))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
