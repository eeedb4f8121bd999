package audit_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// Verify's promise that an intact row's columns are TEXT holds on both
// engines, each asked in its own terms: on SQLite a value stored as a
// BLOB, or a NULL, in a TEXT column; on PostgreSQL, whose columns hold
// only their type, a column whose type or NOT NULL someone with the
// table owner's rights changed. And a database without audit_checkpoints
// (from before them) verifies, on both.
func TestVerifyFindsColumnsNotStoredAsText(t *testing.T) {
	tests := []struct {
		name             string
		sqlite, postgres []string
		wantSeq          int64
		want             string
	}{
		{"details not text",
			[]string{`UPDATE audit_events SET details = CAST(details AS BLOB)`},
			[]string{`ALTER TABLE audit_events ALTER COLUMN details DROP DEFAULT`,
				`ALTER TABLE audit_events ALTER COLUMN details TYPE bytea USING convert_to(details, 'UTF8')`},
			1, "details not stored as TEXT"}, // every row's: the first is bad
		{"a NULL tenant",
			[]string{`CREATE TABLE rebuilt AS SELECT * FROM audit_events`, `DROP TABLE audit_events`,
				`ALTER TABLE rebuilt RENAME TO audit_events`, `UPDATE audit_events SET tenant = NULL WHERE seq = 3`},
			[]string{`ALTER TABLE audit_events ALTER COLUMN tenant DROP NOT NULL`, `UPDATE audit_events SET tenant = NULL WHERE seq = 3`},
			3, "tenant not stored as TEXT"},
		{"checkpoint signature not text",
			[]string{`UPDATE audit_checkpoints SET signature = CAST(signature AS BLOB)`},
			[]string{`ALTER TABLE audit_checkpoints ALTER COLUMN signature TYPE bytea USING decode(signature, 'base64')`},
			2, "signature not stored as TEXT"},
		{"no checkpoints table",
			[]string{`DROP TABLE audit_checkpoints`},
			[]string{`DROP TABLE audit_checkpoints`},
			-1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			u, dir := storetest.URL(t), t.TempDir()
			db, err := store.OpenURL(ctx, u, store.Options{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s := signerFor(t, db)
			appendEvents(t, db, 2)
			checkpoint(t, db, s, time.Now())
			appendEvents(t, db, 2)
			if _, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: s.PublicKey()}); err != nil {
				t.Fatalf("Verify before tampering = %v", err)
			}

			raw, stmts := rawAccess(t, db), tt.sqlite
			if db.Dialect() == store.Postgres {
				stmts = tt.postgres
			}
			for _, stmt := range stmts {
				mustExec(t, raw, stmt)
			}

			// As `warden audit verify` reads it: opened afresh, read-only.
			// (A pool that prepared the verifier's query before a column's
			// type changed fails it: "cached plan must not change result
			// type".)
			ro, err := store.OpenURL(ctx, u, store.Options{DataDir: dir, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			head, err := audit.Verify(ctx, ro.Read(), &audit.Trust{Key: s.PublicKey()})
			var ce *audit.ChainError
			switch {
			case tt.wantSeq < 0:
				if err != nil || head.Seq != 4 {
					t.Fatalf("Verify = %+v, %v; want intact at seq 4", head, err)
				}
			default:
				if !errors.As(err, &ce) || ce.Seq != tt.wantSeq || !strings.Contains(ce.Reason, tt.want) {
					t.Fatalf("Verify = %v; want a ChainError at seq %d saying %q", err, tt.wantSeq, tt.want)
				}
			}
		})
	}
}

// rawAccess is what a tamperer with the table owner's rights has: on
// SQLite the file (tamperer), on PostgreSQL the pool, with the
// append-only triggers dropped.
func rawAccess(t *testing.T, db *store.DB) *sql.DB {
	t.Helper()
	if !storetest.Postgres() {
		return tamperer(t, db)
	}
	for _, tr := range []string{"audit_events_no_update ON audit_events", "audit_events_no_delete ON audit_events",
		"audit_checkpoints_no_update ON audit_checkpoints", "audit_checkpoints_no_delete ON audit_checkpoints"} {
		mustExec(t, db.Read(), `DROP TRIGGER `+tr)
	}
	return db.Read()
}
