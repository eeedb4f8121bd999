package audit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// approvalExample is the event docs/audit-format.md shows as an export
// row: Alice approving a $2,400 refund, named and amounted.
var approvalExample = audit.Event{
	Time:    time.Date(2025, 6, 1, 9, 31, 0, 0, time.UTC),
	Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: "01JWKX4Q8ZB3C5D7E9F1G2H3J4", Name: "Alice Approver", Email: "alice@example.com"},
	Tenant:  "acme",
	Verb:    "action.approved",
	Subject: audit.Subject{Type: "action", ID: "01JWKX7M2N4P6Q8R0S2T4V6W8X"},
	Details: map[string]any{"amount_minor": 240000, "currency": "USD", "approvals": "1 of 1"},
}

// describeStub stands for the console's sentences (handlers.AuditSentences).
func describeStub(_ context.Context, evs []audit.Event) ([]string, error) {
	out := make([]string, len(evs))
	for i, e := range evs {
		who := e.Actor.Name
		if who == "" {
			who = "Console user " + e.Actor.ID
		}
		out[i] = who + " " + e.Verb + " " + e.Subject.ID
	}
	return out, nil
}

func appendOne(t testing.TB, db *store.DB, ev audit.Event) audit.Event {
	t.Helper()
	var out audit.Event
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		out, err = audit.Append(context.Background(), tx, ev)
		return err
	})
	if err != nil {
		t.Fatalf("Append(%s): %v", ev.Verb, err)
	}
	return out
}

// TestAppendRecordsWhoActed: a person's name and e-mail are written into
// the event itself, as the principals table has them at that moment, and
// stay what they were after the person is renamed.
func TestAppendRecordsWhoActed(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	var id string
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		id, err = principals.Upsert(ctx, tx, principals.Principal{Issuer: "https://idp", Subject: "alice", Name: "Alice Approver", Email: "alice@example.com"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	details := map[string]any{"approvals": "1 of 1"}
	ev := appendOne(t, db, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: id}, Verb: "action.approved",
		Subject: audit.Subject{Type: "action", ID: "act_1"}, Details: details})
	if ev.Actor.Name != "Alice Approver" || ev.Actor.Email != "alice@example.com" {
		t.Errorf("appended actor = %+v, want Alice Approver <alice@example.com>", ev.Actor)
	}
	if _, changed := details[audit.ActorDetailsKey]; changed {
		t.Errorf("Append changed the caller's details: %v", details)
	}

	// Alice is renamed at her next sign-in; her earlier event keeps the name she acted under.
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, err := principals.Upsert(ctx, tx, principals.Principal{Issuer: "https://idp", Subject: "alice", Name: "Alice Married", Email: "alice.m@example.com"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	later := appendOne(t, db, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: id}, Verb: "auth.logout"})
	stored := readRows(t, db.Read())
	if want := `{"actor":{"email":"alice@example.com","name":"Alice Approver"},"approvals":"1 of 1"}`; stored[0].Details != want {
		t.Errorf("stored details = %s, want %s", stored[0].Details, want)
	}
	if later.Actor.Name != "Alice Married" || !strings.Contains(stored[1].Details, "alice.m@example.com") {
		t.Errorf("the later event records %+v / %s, want the new name", later.Actor, stored[1].Details)
	}
	trail, err := audit.Trail(ctx, db.Read(), "action", "act_1")
	if err != nil || len(trail) != 1 || trail[0].Actor.Name != "Alice Approver" || trail[0].Actor.Email != "alice@example.com" {
		t.Errorf("Trail = %+v, %v; want the recorded name and e-mail", trail, err)
	}

	// Who is not a person is not named; a principal Warden never saw is
	// recorded as it is; nobody may pass the key themselves.
	key := appendOne(t, db, audit.Event{Actor: audit.Actor{Type: audit.ActorKey, ID: "key_1", Name: "sneaky"}, Verb: "action.requested"})
	stranger := appendOne(t, db, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "nobody"}, Verb: "auth.logout"})
	for _, e := range []audit.Event{key, stranger} {
		if e.Actor.Name != "" || e.Actor.Email != "" || e.Details[audit.ActorDetailsKey] != nil {
			t.Errorf("%s by %s recorded an identity: %+v %v", e.Verb, e.Actor.ID, e.Actor, e.Details)
		}
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: id}, Verb: "auth.logout",
			Details: map[string]any{"actor": map[string]any{"name": "Someone Else"}}})
		return err
	})
	if err == nil {
		t.Error("Append took a caller's details.actor; want it refused")
	}
	// A control character from the identity provider does not stop the
	// event, and does not reach an export raw.
	odd := appendOne(t, db, audit.Event{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "x", Name: "Eve\nEvil\u0007"}, Verb: "auth.logout"})
	if odd.Actor.Name != "Eve Evil" {
		t.Errorf("name with control characters recorded as %q, want %q", odd.Actor.Name, "Eve Evil")
	}
	if _, err := audit.Verify(ctx, db.Read(), nil); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestExportNamesPeople: an export carries the approver's name and
// e-mail, the sentence and the amount in major units, and verifies.
func TestExportNamesPeople(t *testing.T) {
	db := openDB(t)
	appendOne(t, db, exampleEvent1) // an event written before names were recorded
	appendOne(t, db, approvalExample)
	for _, format := range exportFormats {
		var buf bytes.Buffer
		m, err := audit.Export(context.Background(), db.Read(), audit.Query{}, format, describeStub, &buf, testSigner(), exportNow)
		if err != nil {
			t.Fatal(err)
		}
		got := parseExported(t, buf.Bytes(), format)
		if len(got) != 2 {
			t.Fatalf("%s: %d rows, want 2", format, len(got))
		}
		old, approval := got[0], got[1]
		if old.ActorName != "" || old.ActorEmail != "" || old.Amount != "" || old.Sentence != "Console user 01JWKX4Q8ZB3C5D7E9F1G2H3J4 auth.login 01JWKX4Q8ZB3C5D7E9F1G2H3J4" {
			t.Errorf("%s: the unnamed event's row = %+v", format, old)
		}
		want := [4]string{"Alice Approver", "alice@example.com", "Alice Approver action.approved 01JWKX7M2N4P6Q8R0S2T4V6W8X", "2400.00 USD"}
		if g := [4]string{approval.ActorName, approval.ActorEmail, approval.Sentence, approval.Amount}; g != want {
			t.Errorf("%s: approval row name, e-mail, sentence, amount = %q, want %q", format, g, want)
		}
		if m.Version != audit.ExportVersion {
			t.Errorf("manifest version %s, want %s", m.Version, audit.ExportVersion)
		}
		if rep, err := audit.VerifyExport(bytes.NewReader(buf.Bytes()), m, testSigner().PublicKey()); err != nil || !rep.OK() {
			t.Errorf("%s: VerifyExport = %+v, %v; want verified", format, rep, err)
		}
	}
}

func TestExportAmountColumn(t *testing.T) {
	for _, tt := range []struct {
		name    string
		details map[string]any
		want    string
	}{
		{"dollars", map[string]any{"amount_minor": 240000, "currency": "USD"}, "2400.00 USD"},
		{"cents", map[string]any{"amount_minor": 5, "currency": "EUR"}, "0.05 EUR"},
		{"no minor units", map[string]any{"amount_minor": 5000, "currency": "JPY"}, "5000 JPY"},
		{"three decimals", map[string]any{"amount_minor": 1500, "currency": "KWD"}, "1.500 KWD"},
		{"negative", map[string]any{"amount_minor": -250, "currency": "USD"}, "-2.50 USD"},
		{"no currency", map[string]any{"amount_minor": 100}, ""},
		{"unknown currency", map[string]any{"amount_minor": 100, "currency": "ZZZ"}, ""},
		{"not an integer", map[string]any{"amount_minor": 1.5, "currency": "USD"}, ""},
		{"none", map[string]any{"note": "x"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			appendOne(t, db, audit.Event{Actor: audit.Actor{Type: audit.ActorSystem, ID: "t"}, Verb: "action.requested", Details: tt.details})
			data, m := exportOf(t, db, audit.Query{}, audit.FormatCSV)
			if got := parseExported(t, data, audit.FormatCSV)[0].Amount; got != tt.want {
				t.Errorf("amount = %q, want %q", got, tt.want)
			}
			if rep, err := audit.VerifyExport(bytes.NewReader(data), m, testSigner().PublicKey()); err != nil || !rep.OK() {
				t.Errorf("VerifyExport = %+v, %v", rep, err)
			}
		})
	}
}

// resignManifest makes m describe data again and signs it with testSigner: what
// someone holding the audit key could do, so that only the row checks are
// left to catch a change.
func resignManifest(m audit.Manifest, data []byte) audit.Manifest {
	sum := sha256.Sum256(data)
	m.SHA256 = hex.EncodeToString(sum[:])
	m.Signature = base64.StdEncoding.EncodeToString(testSigner().Sign(m.SignedBytes()))
	return m
}

// TestExportNameTampering: a changed name fails verification, whether it
// is changed in the name column (which must agree with the hashed
// details) or in the hashed details themselves.
func TestExportNameTampering(t *testing.T) {
	db := openDB(t)
	appendOne(t, db, approvalExample)
	for _, format := range exportFormats {
		data, m := exportOf(t, db, audit.Query{}, format)
		csv := format == audit.FormatCSV
		pick := func(jsonl, csvText string) string {
			if csv {
				return csvText
			}
			return jsonl
		}
		for _, tt := range []struct {
			name, from, to, reason string
		}{
			{"name column", pick(`"actor_name":"Alice Approver"`, `,Alice Approver,`), pick(`"actor_name":"Mallory"`, `,Mallory,`), "actor_name"},
			{"name in the hashed details", pick(`\"name\":\"Alice Approver\"`, `""name"":""Alice Approver""`),
				pick(`\"name\":\"Mallory\"`, `""name"":""Mallory""`), "hash does not match"},
			{"e-mail column", pick(`"actor_email":"alice@example.com"`, `,alice@example.com,`), pick(`"actor_email":"mallory@example.com"`, `,mallory@example.com,`), "actor_email"},
			{"amount column", "2400.00 USD", "24.00 USD", "amount"},
		} {
			from, to := tt.from, tt.to
			if !bytes.Contains(data, []byte(from)) {
				t.Fatalf("%s %s: the export has no %s:\n%s", format, tt.name, from, data)
			}
			bad := bytes.Replace(data, []byte(from), []byte(to), 1)
			rep, err := audit.VerifyExport(bytes.NewReader(bad), resignManifest(m, bad), testSigner().PublicKey())
			if err != nil || rep.OK() || rep.Row != 1 || !strings.Contains(rep.Problem, tt.reason) {
				t.Errorf("%s %s: VerifyExport = %+v, %v; want row 1 refused for %q", format, tt.name, rep, err, tt.reason)
			}
			// Without the key the file's SHA-256 alone gives it away.
			if rep, _ := audit.VerifyExport(bytes.NewReader(bad), m, testSigner().PublicKey()); rep.OK() {
				t.Errorf("%s %s: verified against the original manifest", format, tt.name)
			}
		}
	}
}

// TestVersion1ExportsStillVerify: files written before exports named people
// (testdata/export-v1, made by Warden at that version) verify as they
// did, and a change to one is still found.
func TestVersion1ExportsStillVerify(t *testing.T) {
	for _, name := range []string{"whole.jsonl", "whole.csv", "acme.csv"} {
		data, err := os.ReadFile(filepath.Join("testdata", "export-v1", name))
		if err != nil {
			t.Fatal(err)
		}
		mf, err := os.Open(filepath.Join("testdata", "export-v1", name+".manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := audit.ReadManifest(mf)
		mf.Close()
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != audit.ExportVersionV1 {
			t.Fatalf("%s: version %s, want %s", name, m.Version, audit.ExportVersionV1)
		}
		rep, err := audit.VerifyExport(bytes.NewReader(data), m, testSigner().PublicKey())
		if err != nil || !rep.OK() || rep.Rows != m.Rows {
			t.Errorf("%s: VerifyExport = %+v, %v; want verified", name, rep, err)
		}
		bad := bytes.Replace(data, []byte("Zürich"), []byte("Zurich"), 1)
		if rep, _ := audit.VerifyExport(bytes.NewReader(bad), resignManifest(m, bad), testSigner().PublicKey()); rep.OK() || rep.Row != 1 {
			t.Errorf("%s tampered: VerifyExport = %+v; want row 1 refused", name, rep)
		}
	}
}

// TestExportDescribeIsCalledPerChunk: the sentence column comes from
// Describe, chunk by chunk, and a failing Describe fails the export.
func TestExportDescribeIsCalledPerChunk(t *testing.T) {
	db := openDB(t)
	bulkChain(t, db, 2500, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	var calls []int
	describe := func(ctx context.Context, evs []audit.Event) ([]string, error) {
		calls = append(calls, len(evs))
		return describeStub(ctx, evs)
	}
	var buf bytes.Buffer
	if _, err := audit.Export(context.Background(), db.Read(), audit.Query{}, audit.FormatJSONL, describe, &buf, testSigner(), exportNow); err != nil {
		t.Fatal(err)
	}
	if want := []int{1000, 1000, 500}; !reflect.DeepEqual(calls, want) {
		t.Errorf("Describe called with %v events, want %v", calls, want)
	}
	short := func(context.Context, []audit.Event) ([]string, error) { return nil, nil }
	if _, err := audit.Export(context.Background(), db.Read(), audit.Query{}, audit.FormatCSV, short, &bytes.Buffer{}, testSigner(), exportNow); err == nil {
		t.Error("Export with a Describe that returned no sentences succeeded; want an error")
	}
}
