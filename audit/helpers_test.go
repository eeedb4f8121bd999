package audit_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"

	_ "modernc.org/sqlite" // the raw connection a tamperer uses
)

// openDB opens a fresh database in a temporary directory.
func openDB(t testing.TB) *store.DB {
	t.Helper()
	return storetest.Open(t)
}

// sampleEvent is the i-th event of a test chain; the fields vary with i so
// that no two events encode alike.
func sampleEvent(i int) audit.Event {
	tenants := []string{"acme", "globex", ""}
	return audit.Event{
		Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: fmt.Sprintf("01JWKX4Q8ZB3C5D7E9F1G2H3J%d", i)},
		Tenant:  tenants[i%len(tenants)],
		Verb:    "auth.login",
		Subject: audit.Subject{Type: "principal", ID: fmt.Sprintf("01JWKX4Q8ZB3C5D7E9F1G2H3J%d", i)},
		Details: map[string]any{"method": "oidc", "n": i, "note": "Zürich ☕"},
	}
}

// appendEvents appends n sample events, one transaction each.
func appendEvents(t testing.TB, db *store.DB, n int) []audit.Event {
	t.Helper()
	var out []audit.Event
	for i := range n {
		var ev audit.Event
		err := db.Transact(context.Background(), func(tx *store.Tx) error {
			var err error
			ev, err = audit.Append(context.Background(), tx, sampleEvent(i))
			return err
		})
		if err != nil {
			t.Fatalf("append event %d: %v", i+1, err)
		}
		out = append(out, ev)
	}
	return out
}

// tamperer opens its own connection to the database file and drops the
// append-only triggers of events and checkpoints, as anyone with write
// access to the file can.
func tamperer(t testing.TB, db *store.DB) *sql.DB {
	t.Helper()
	if storetest.Postgres() {
		t.Skip("tampering opens the SQLite file directly")
	}
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatalf("open raw connection: %v", err)
	}
	t.Cleanup(func() { raw.Close() })
	mustExec(t, raw, `DROP TRIGGER audit_events_no_update`)
	mustExec(t, raw, `DROP TRIGGER audit_events_no_delete`)
	mustExec(t, raw, `DROP TRIGGER audit_checkpoints_no_update`)
	mustExec(t, raw, `DROP TRIGGER audit_checkpoints_no_delete`)
	return raw
}

func mustExec(t testing.TB, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := q.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// row is an audit_events row as text, the way an outside verifier reads it.
type row = audit.Row

func readRows(t testing.TB, q *sql.DB) []row {
	t.Helper()
	rs, err := q.Query(`SELECT seq, time, actor_type, actor_id, tenant, verb,
		subject_type, subject_id, details, prev_hash, hash FROM audit_events ORDER BY seq`)
	if err != nil {
		t.Fatalf("read rows: %v", err)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.Seq, &r.Time, &r.ActorType, &r.ActorID, &r.Tenant, &r.Verb,
			&r.SubjectType, &r.SubjectID, &r.Details, &r.PrevHash, &r.Hash); err != nil {
			t.Fatalf("scan row: %v", err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("read rows: %v", err)
	}
	return out
}

// docHash computes a row's hash the way docs/audit-format.md describes,
// without the audit package: SHA-256 over the tag and the fields in order,
// each preceded by its byte length as a 4-byte big-endian integer, as
// lowercase hex.
func docHash(r row) string {
	h := sha256.New()
	for _, f := range []string{
		"warden-audit-v1", strconv.FormatInt(r.Seq, 10), r.Time, r.ActorType, r.ActorID,
		r.Tenant, r.Verb, r.SubjectType, r.SubjectID, r.Details, r.PrevHash,
	} {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(f))))
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// insertRow writes r as it is, hash included.
func insertRow(t testing.TB, q *sql.DB, r row) {
	t.Helper()
	mustExec(t, q, `INSERT INTO audit_events
		(seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Seq, r.Time, r.ActorType, r.ActorID, r.Tenant, r.Verb, r.SubjectType, r.SubjectID, r.Details, r.PrevHash, r.Hash)
}

// rehash is the careful tamperer: it relinks and rehashes every row from
// seq from onwards, so each row's hash matches its contents and prev_hash
// matches the row before. The first rehashed row gets prev as its
// prev_hash.
func rehash(t testing.TB, q *sql.DB, from int64, prev string) {
	t.Helper()
	for _, r := range readRows(t, q) {
		if r.Seq < from {
			continue
		}
		r.PrevHash = prev
		r.Hash = docHash(r)
		mustExec(t, q, `UPDATE audit_events SET prev_hash = ?, hash = ? WHERE seq = ?`, r.PrevHash, r.Hash, r.Seq)
		prev = r.Hash
	}
}
