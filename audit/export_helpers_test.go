package audit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// exportNow is the creation time the tests' exports carry.
var exportNow = time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)

// testSigner is a fixed audit key; otherSigner is someone else's.
func testSigner() *audit.Signer {
	return audit.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
}

func otherSigner() *audit.Signer {
	return audit.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize)))
}

// trickyEvent is the i-th event of a chain whose values stress CSV and
// spreadsheets: commas, quotes, and cells that look like formulas.
func trickyEvent(i int) audit.Event {
	actors := []string{`=HYPERLINK("http://evil.example","x")`, "-2", "+1", "@SUM(A1)", "'quoted", "a,b", "plain"}
	subjects := []string{`say "hi", then leave`, "-7", "=1+2", "01JWKX4Q8ZB3C5D7E9F1G2H3J4"}
	tenants := []string{"acme", "globex", "acme", ""}
	verbs := []string{"auth.login", "action.approve", "action.reject", "tenant.create"}
	return audit.Event{
		Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: actors[i%len(actors)]},
		Tenant:  tenants[i%len(tenants)],
		Verb:    verbs[i%len(verbs)],
		Subject: audit.Subject{Type: "action", ID: subjects[i%len(subjects)]},
		Details: map[string]any{"n": i, "note": "a, b \"c\"\nd", "formula": "=SUM(A1:A9)", "office": "Zürich ☕"},
	}
}

// appendTricky appends n tricky events through Append, a few
// milliseconds apart so that time ranges can split them.
func appendTricky(t testing.TB, db *store.DB, n int) []audit.Event {
	t.Helper()
	ctx := context.Background()
	var out []audit.Event
	for i := range n {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			ev := trickyEvent(i)
			ev.Time = time.Now().Add(time.Duration(i) * time.Millisecond)
			ev, err := audit.Append(ctx, tx, ev)
			out = append(out, ev)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// exportOf exports q in format with testSigner.
func exportOf(t testing.TB, db *store.DB, q audit.Query, format string) ([]byte, audit.Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := audit.Export(context.Background(), db.Read(), q, format, nil, &buf, testSigner(), exportNow)
	if err != nil {
		t.Fatalf("Export(%+v, %s): %v", q, format, err)
	}
	return buf.Bytes(), m
}

// exportedRow is a row of a version 2 export: the stored fields and the
// columns derived from them.
type exportedRow struct {
	row
	ActorName  string `json:"actor_name"`
	ActorEmail string `json:"actor_email"`
	Sentence   string `json:"sentence"`
	Amount     string `json:"amount"`
}

// exportHeader is the CSV header of a version 2 export.
const exportHeader = "seq,time,actor_type,actor_id,actor_name,actor_email,tenant,verb,subject_type,subject_id,sentence,amount,details,prev_hash,hash"

// parseExport reads an export's stored fields back the way an outside
// verifier does (parseExported).
func parseExport(t testing.TB, data []byte, format string) []row {
	t.Helper()
	var out []row
	for _, x := range parseExported(t, data, format) {
		out = append(out, x.row)
	}
	return out
}

// parseExported reads an export's rows back the way an outside verifier
// does: JSONL with a JSON decoder, CSV with encoding/csv, removing the one
// leading ' of a guarded cell.
func parseExported(t testing.TB, data []byte, format string) []exportedRow {
	t.Helper()
	var out []exportedRow
	if format == audit.FormatJSONL {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		for {
			var r exportedRow
			if err := dec.Decode(&r); err == io.EOF {
				return out
			} else if err != nil {
				t.Fatalf("decode JSONL row %d: %v", len(out)+1, err)
			}
			out = append(out, r)
		}
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("read CSV: %v", err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != exportHeader {
		t.Fatalf("CSV header = %q", recs)
	}
	for _, c := range recs[1:] {
		for i := range c {
			c[i] = strings.TrimPrefix(c[i], "'")
		}
		var seq int64
		if _, err := fmt.Sscan(c[0], &seq); err != nil {
			t.Fatalf("CSV seq %q: %v", c[0], err)
		}
		out = append(out, exportedRow{
			row: row{Seq: seq, Time: c[1], ActorType: c[2], ActorID: c[3], Tenant: c[6], Verb: c[7],
				SubjectType: c[8], SubjectID: c[9], Details: c[12], PrevHash: c[13], Hash: c[14]},
			ActorName: c[4], ActorEmail: c[5], Sentence: c[10], Amount: c[11]})
	}
	return out
}

// bulkChain writes n events to an empty table in one transaction, hashed
// as docs/audit-format.md says: the fast way to a long, valid chain. Event
// i is at start + i ms.
func bulkChain(t testing.TB, db *store.DB, n int, start time.Time) {
	t.Helper()
	ctx := context.Background()
	tenants := []string{"acme", "globex", ""}
	verbs := []string{"auth.login", "action.approve", "action.reject", "tenant.create"}
	err := db.Transact(ctx, func(tx *store.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit_events
			(seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		prev := audit.GenesisHash
		for i := range n {
			r := row{
				Seq:         int64(i + 1),
				Time:        start.Add(time.Duration(i) * time.Millisecond).UTC().Format(audit.TimeFormat),
				ActorType:   audit.ActorPrincipal,
				ActorID:     fmt.Sprintf("01JWKX4Q8ZB3C5D7E9F1G2H%03d", i%97),
				Tenant:      tenants[i%len(tenants)],
				Verb:        verbs[i%len(verbs)],
				SubjectType: "action",
				SubjectID:   fmt.Sprintf("01JWKX4Q8ZB3C5D7E9F%07d", i),
				Details:     fmt.Sprintf(`{"amount_minor":%d,"n":%d,"note":"Zürich ☕, \"quoted\""}`, i*100, i),
				PrevHash:    prev,
			}
			r.Hash = docHash(r)
			if _, err := stmt.ExecContext(ctx, r.Seq, r.Time, r.ActorType, r.ActorID, r.Tenant, r.Verb,
				r.SubjectType, r.SubjectID, r.Details, r.PrevHash, r.Hash); err != nil {
				return err
			}
			prev = r.Hash
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bulk chain of %d: %v", n, err)
	}
}

// lines splits an export into its lines, each with its line ending (the
// rows of these tests hold no raw newlines).
func lines(data []byte) [][]byte {
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}
