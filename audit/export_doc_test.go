package audit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
)

// TestExportDocJSONLExample: the JSONL rows shown in docs/audit-format.md
// are what Export writes for the worked example's first event (written
// before events recorded names) and for an approval, with the sentences
// the console writes for them.
func TestExportDocJSONLExample(t *testing.T) {
	db := openDB(t)
	appendOne(t, db, exampleEvent1)
	appendOne(t, db, approvalExample)
	sentences := []string{
		"Console user 01JWKX4Q8ZB3C5D7E9F1G2H3J4 signed in as approver, auditor",
		"Alice Approver approved action 01JWKX7M2N4P6Q8R0S2T4V6W8X — Refund $2,400.00 on ORD-1004",
	}
	describe := func(_ context.Context, evs []audit.Event) ([]string, error) { return sentences[:len(evs)], nil }
	var data bytes.Buffer
	if _, err := audit.Export(context.Background(), db.Read(), audit.Query{}, audit.FormatJSONL, describe, &data, testSigner(), exportNow); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, data.Bytes()) {
		t.Errorf("%s does not show the JSONL rows Export writes:\n%s", formatDoc, data.Bytes())
	}
}

// TestDocumentedExportVerifier runs the Python export verifier of
// docs/audit-format.md, and the openssl command beside it, against exports
// Warden wrote, intact and tampered.
func TestDocumentedExportVerifier(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```python\n(# verify_export\\.py.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("%s has no verify_export.py block", formatDoc)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "verify_export.py")
	if err := os.WriteFile(script, m[1], 0o600); err != nil {
		t.Fatal(err)
	}
	openssl := opensslWithRawin(t)

	db := openDB(t)
	appendTricky(t, db, 9)
	// A row with a line break and formula-like values, as only someone
	// with the database file can write it.
	raw := tamperer(t, db)
	last := readRows(t, raw)[8]
	odd := row{Seq: 10, Time: "2025-06-01T09:30:00.000000000Z", ActorType: "principal", ActorID: "line one\nline two",
		Tenant: "acme", Verb: "auth.login", SubjectType: "action", SubjectID: "=1+2", Details: `{"a":"b,\"c\""}`, PrevHash: last.Hash}
	odd.Hash = docHash(odd)
	insertRow(t, raw, odd)

	run := func(name string, args ...string) (string, error) {
		out, err := exec.Command(name, args...).CombinedOutput()
		return string(out), err
	}
	var exit *exec.ExitError
	for _, tt := range []struct {
		name   string
		q      audit.Query
		format string
	}{
		{"whole-jsonl", audit.Query{}, audit.FormatJSONL},
		{"whole-csv", audit.Query{}, audit.FormatCSV},
		{"acme-jsonl", audit.Query{Tenant: "acme"}, audit.FormatJSONL},
		{"acme-csv", audit.Query{Tenant: "acme"}, audit.FormatCSV},
	} {
		data, man := exportOf(t, db, tt.q, tt.format)
		path := filepath.Join(dir, tt.name+"."+tt.format)
		mpath := path + ".manifest.json"
		writeFile(t, path, data)
		var mb bytes.Buffer
		if err := audit.WriteManifest(&mb, man); err != nil {
			t.Fatal(err)
		}
		writeFile(t, mpath, mb.Bytes())

		out, err := run(python, script, path, mpath)
		want := "continuity verified"
		if !man.Contiguous {
			want = "continuity not claimed"
		}
		if err != nil || !strings.Contains(out, "rows verified: "+itoa(man.Rows)+"; "+want) {
			t.Errorf("%s: python verifier: %v\n%s", tt.name, err, out)
		}
		sigCheck := func() (string, error) {
			return run(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", mpath+".pem", "-rawin", "-in", mpath+".signed", "-sigfile", mpath+".sig")
		}
		if openssl != "" {
			if out, err := sigCheck(); err != nil || !strings.Contains(out, "Signature Verified Successfully") {
				t.Errorf("%s: openssl on an intact manifest: %v\n%s", tt.name, err, out)
			}
		}

		// A changed byte in the file.
		writeFile(t, path, bytes.Replace(data, []byte("auth.login"), []byte("auth.logon"), 1))
		if out, err := run(python, script, path, mpath); !errors.As(err, &exit) || !strings.Contains(out, "export NOT verified") {
			t.Errorf("%s: python verifier on a changed file: %v\n%s, want a failure", tt.name, err, out)
		}
		writeFile(t, path, data)
		// A row dropped, and the manifest's hash and count made to match.
		ls := lines(data) // the odd row, last, spans two lines in CSV

		drop := 3
		if tt.format == audit.FormatCSV {
			drop = 4 // the header is line 1
		}
		cut := bytes.Join(append(ls[:drop-1:drop-1], ls[drop:]...), nil)
		writeFile(t, path, cut)
		edited := man
		edited.Rows--
		edited.SHA256 = sha256Hex(cut)
		mb.Reset()
		audit.WriteManifest(&mb, edited)
		writeFile(t, mpath, mb.Bytes())
		out, err = run(python, script, path, mpath)
		if man.Contiguous && (!errors.As(err, &exit) || !strings.Contains(out, "does not follow")) {
			t.Errorf("%s: python verifier on a contiguous export with a row dropped: %v\n%s, want a failure", tt.name, err, out)
		}
		if openssl != "" {
			if out, err := sigCheck(); !errors.As(err, &exit) {
				t.Errorf("%s: openssl on an edited manifest: %v\n%s, want a failure", tt.name, err, out)
			}
		}
	}
}

// opensslWithRawin is the openssl binary when it can verify Ed25519
// signatures of raw messages (OpenSSL 3), else "".
func opensslWithRawin(t *testing.T) string {
	path, err := exec.LookPath("openssl")
	if err != nil {
		t.Log("openssl not installed: the signature is checked by Go only")
		return ""
	}
	out, _ := exec.Command(path, "pkeyutl", "-help").CombinedOutput()
	if !bytes.Contains(out, []byte("-rawin")) {
		t.Log("openssl has no pkeyutl -rawin (OpenSSL 3 needed): the signature is checked by Go only")
		return ""
	}
	return path
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
