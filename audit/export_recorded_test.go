package audit_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

// failingWriter takes n bytes, then fails, as a download cut off does.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("connection reset")
	}
	w.n -= len(p)
	return len(p), nil
}

// An export a person downloads signs the head before it is written and is
// in the trail after it was written in full; one cut off is not.
func TestExportRecordedSignsFirstAndRecordsAfter(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	appendEvents(t, db, 3)
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: "p-aud"}
	now := time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)

	var buf bytes.Buffer
	m, err := audit.ExportRecorded(ctx, db, audit.Query{}, audit.FormatJSONL, nil, &buf, testSigner(), actor, now)
	if err != nil {
		t.Fatalf("ExportRecorded: %v", err)
	}
	if m.Rows != 3 || buf.Len() == 0 {
		t.Fatalf("exported %d rows, %d bytes; want the 3 events", m.Rows, buf.Len())
	}
	heads, err := audit.Checkpoints(ctx, db.Read())
	if err != nil || len(heads) != 1 || heads[0].Seq != 3 {
		t.Fatalf("checkpoints = %+v, %v; want one signed head at seq 3, taken before the export", heads, err)
	}
	rows := readRows(t, db.Read())
	if last := rows[len(rows)-1]; len(rows) != 4 || last.Verb != "audit.export" || last.SubjectID != m.SHA256 {
		t.Fatalf("trail ends with %+v (%d rows); want audit.export of the file's SHA-256", last, len(rows))
	}

	if _, err := audit.ExportRecorded(ctx, db, audit.Query{}, audit.FormatJSONL, nil, &failingWriter{n: 10}, testSigner(), actor, now); err == nil {
		t.Fatal("an export whose writer failed reported success")
	}
	if after := readRows(t, db.Read()); len(after) != 4 {
		t.Errorf("a cut-off export wrote %d events to the trail; want none (still 4)", len(after)-4)
	}
}
